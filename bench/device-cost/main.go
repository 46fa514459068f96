// Command device-cost (bench/device-cost/run) measures what a real etcd
// costs its block device per put (issue 22): it starts an etcd as its own
// process (the embedded etcd of this repository, or Debian's /usr/bin/etcd)
// on --dir, drives it with open-loop puts of etcdctl check perf's shape
// (--clients clients, new --key-bytes keys, --val-bytes values) at each of
// --rates for --duration, and counts around each rate:
//
//   - from /proc/diskstats (the device under --dir): write requests, bytes
//     written and flushes, per put (the whole device: other writers on the
//     machine count too; an idle window before each etcd is measured and
//     printed as the background);
//   - from the blkio cgroup the etcd runs in (cgroup v1,
//     blkio.throttle.io_serviced): the write I/Os and bytes of etcd's own
//     process, per put, which is what a blkio IOPS cap counts;
//   - from etcd's /metrics: WAL fsyncs and backend commits per put, and
//     the p99 of both.
//
// With --iops-caps (e.g. 0,1000) each cap runs in turn: 0 is no cap, N
// writes "MAJ:MIN N" to the cgroup's blkio.throttle.write_iops_device.
// The cgroup is created under /sys/fs/cgroup/blkio, this process moves
// into it (so the etcd it starts is in it too) and out again at the end,
// and it is removed. Needs root for the cgroup; without --iops-caps other
// than 0 it still needs it for the per-process counters.
//
// It is a measurement, not a test: exit 0 whatever it finds, 1 when a tool
// failed, 2 for bad flags, 130 when interrupted.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"etcdbench/internal/capacity/diskmodel"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/sysinfo"
)

type options struct {
	dir       string
	etcds     []string
	rates     []float64
	caps      []int
	duration  time.Duration
	rounds    int
	clients   int
	keyBytes  int
	valBytes  int
	idle      time.Duration
	debianBin string
}

func main() {
	if code, ok := etcdcluster.MaybeRunMember(); ok {
		os.Exit(code)
	}
	os.Exit(run())
}

func run() int {
	var o options
	var etcds, rates, caps string
	fs := flag.NewFlagSet("device-cost", flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", "/var/tmp", "directory on the device to measure; a scratch directory is made inside it and removed")
	fs.StringVar(&etcds, "etcd", "embedded,debian,model", "which etcds: embedded (this repository's, its own process), debian (/usr/bin/etcd), model (etcdbench capacity's model of etcd: its open-loop WAL and etcd's backend, in this process)")
	fs.StringVar(&rates, "rates", "150,500,1000,2000", "offered put rates, puts/s")
	fs.StringVar(&caps, "iops-caps", "0", "blkio write IOPS caps to run under, 0 for none (e.g. 0,1000)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "time at each rate")
	fs.IntVar(&o.rounds, "rounds", 1, "rounds over everything")
	fs.IntVar(&o.clients, "clients", 50, "concurrent clients (etcd's benchmark tool's default in the issue: 50)")
	fs.IntVar(&o.keyBytes, "key-bytes", 256, "key bytes (check perf: 256)")
	fs.IntVar(&o.valBytes, "val-bytes", 1024, "value bytes (check perf: 1024)")
	fs.DurationVar(&o.idle, "idle", 3*time.Second, "idle window measured before each etcd's rates: the device's background")
	fs.StringVar(&o.debianBin, "debian-etcd", "/usr/bin/etcd", "Debian's etcd binary")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	o.etcds = strings.Split(etcds, ",")
	for _, f := range strings.Split(rates, ",") {
		r, err := strconv.ParseFloat(f, 64)
		if err != nil || r <= 0 {
			fmt.Fprintf(os.Stderr, "device-cost: --rates: %q\n", f)
			return 2
		}
		o.rates = append(o.rates, r)
	}
	for _, f := range strings.Split(caps, ",") {
		c, err := strconv.Atoi(f)
		if err != nil || c < 0 {
			fmt.Fprintf(os.Stderr, "device-cost: --iops-caps: %q\n", f)
			return 2
		}
		o.caps = append(o.caps, c)
	}
	if d := os.Getenv("BENCH_CALLER_DIR"); d != "" && !filepath.IsAbs(o.dir) {
		o.dir = filepath.Join(d, o.dir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := measureAll(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "device-cost:", err)
		if ctx.Err() != nil {
			return 130
		}
		return 1
	}
	return 0
}

// row is what one rate measured.
type row struct {
	etcd                      string
	cap                       int
	round                     int
	rate, achieved            float64
	puts                      int64
	devW, devB, devF          float64 // per put, whole device
	cgW, cgB                  float64 // per put, etcd's cgroup
	walSyncs, commits         float64 // per put
	walP99, commitP99, putP99 time.Duration
	walBytes                  float64 // etcd_disk_wal_write_bytes_total per put
	errs                      int64
}

func measureAll(ctx context.Context, o options) error {
	dev, majmin, err := deviceOf(o.dir)
	if err != nil {
		return err
	}
	cg, err := newCgroup()
	if err != nil {
		return err
	}
	defer cg.remove()
	cg.majmin = majmin
	var rows []row
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "etcd\tcap\tround\trate\tachieved\tdev w/put\tdev KiB/put\tdev flush/put\tcg w/put\tcg KiB/put\twal fsync/put\tcommits/put\tWAL B/put\twal p99\tcommit p99\tput p99\terrors\n")
	for round := 1; round <= o.rounds; round++ {
		for _, c := range o.caps {
			if err := cg.setCap(majmin, c); err != nil {
				return err
			}
			for _, e := range o.etcds {
				rs, err := measureEtcd(ctx, o, e, dev, cg, w)
				for i := range rs {
					rs[i].cap, rs[i].round = c, round
					printRow(w, rs[i])
				}
				w.Flush()
				rows = append(rows, rs...)
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func printRow(w *tabwriter.Writer, r row) {
	fmt.Fprintf(w, "%s\t%d\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.3f\t%.4f\t%.0f\t%v\t%v\t%v\t%d\n",
		r.etcd, r.cap, r.round, r.rate, r.achieved, r.devW, r.devB/1024, r.devF, r.cgW, r.cgB/1024, r.walSyncs, r.commits, r.walBytes,
		r.walP99.Round(10*time.Microsecond), r.commitP99.Round(10*time.Microsecond), r.putP99.Round(10*time.Microsecond), r.errs)
}

// etcdProc is a started etcd: its client URL, /metrics URL and a stop.
type etcdProc struct {
	endpoint, metrics string
	stop              func() error
}

func measureEtcd(ctx context.Context, o options, kind, dev string, cg *cgroup, w *tabwriter.Writer) ([]row, error) {
	scratch, err := os.MkdirTemp(o.dir, "device-cost-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	if kind == "model" {
		return measureModel(ctx, o, scratch, dev, cg)
	}
	var p *etcdProc
	switch kind {
	case "embedded":
		p, err = startEmbedded(ctx, scratch)
	case "debian":
		p, err = startDebian(ctx, o.debianBin, scratch)
	default:
		return nil, fmt.Errorf("--etcd %q: want embedded, debian or model", kind)
	}
	if err != nil {
		return nil, err
	}
	defer p.stop()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{p.endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	// The idle window: the device's writes with etcd idle (other writers).
	c0, err := readCounters(ctx, dev, cg, p.metrics)
	if err != nil {
		return nil, err
	}
	select {
	case <-time.After(o.idle):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c1, err := readCounters(ctx, dev, cg, p.metrics)
	if err != nil {
		return nil, err
	}
	secs := c1.t.Sub(c0.t).Seconds()
	fmt.Fprintf(w, "# %s: idle device background %.1f writes/s, %.1f KiB/s, %.1f flushes/s; etcd's cgroup %.1f writes/s\n", kind,
		float64(c1.ds.WriteIOs-c0.ds.WriteIOs)/secs, float64(c1.ds.WriteSectors-c0.ds.WriteSectors)*512/1024/secs,
		float64(c1.ds.FlushIOs-c0.ds.FlushIOs)/secs, float64(c1.cgW-c0.cgW)/secs)
	var rows []row
	for _, rate := range o.rates {
		r, err := measureRate(ctx, o, cli, kind, dev, cg, p.metrics, rate)
		if err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// counters are the readings around one rate.
type counters struct {
	t        time.Time
	ds       sysinfo.DiskStats
	cgW, cgB uint64
	fams     metrics.Families
}

func readCounters(ctx context.Context, dev string, cg *cgroup, url string) (counters, error) {
	var c counters
	var err error
	if c.fams, err = metrics.Scrape(ctx, nil, url); err != nil {
		return c, err
	}
	c.t = time.Now()
	if c.ds, err = sysinfo.ReadDiskstats("/", dev); err != nil {
		return c, err
	}
	c.cgW, c.cgB, err = cg.writes()
	return c, err
}

func measureRate(ctx context.Context, o options, cli *clientv3.Client, kind, dev string, cg *cgroup, url string, rate float64) (row, error) {
	r := row{etcd: kind, rate: rate}
	c0, err := readCounters(ctx, dev, cg, url)
	if err != nil {
		return r, err
	}
	puts, errs, lat, elapsed := load(ctx, cli, o, rate)
	c1, err := readCounters(ctx, dev, cg, url)
	if err != nil {
		return r, err
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	r.puts, r.errs, r.achieved = puts, errs, float64(puts)/elapsed.Seconds()
	n := float64(max(puts, 1))
	r.devW = float64(c1.ds.WriteIOs-c0.ds.WriteIOs) / n
	r.devB = float64(c1.ds.WriteSectors-c0.ds.WriteSectors) * 512 / n
	r.devF = float64(c1.ds.FlushIOs-c0.ds.FlushIOs) / n
	r.cgW, r.cgB = float64(c1.cgW-c0.cgW)/n, float64(c1.cgB-c0.cgB)/n
	if h, ok := metrics.HistogramDelta(c0.fams, c1.fams, "etcd_disk_wal_fsync_duration_seconds"); ok {
		r.walSyncs = float64(h.Count) / n
		r.walP99 = time.Duration(metrics.Quantile(0.99, h) * 1e9)
	}
	if h, ok := metrics.HistogramDelta(c0.fams, c1.fams, "etcd_disk_backend_commit_duration_seconds"); ok {
		r.commits = float64(h.Count) / n
		r.commitP99 = time.Duration(metrics.Quantile(0.99, h) * 1e9)
	}
	b0, e0 := metrics.ValueOf(c0.fams, "etcd_disk_wal_write_bytes_total")
	b1, e1 := metrics.ValueOf(c1.fams, "etcd_disk_wal_write_bytes_total")
	if e0 == nil && e1 == nil {
		r.walBytes = (b1 - b0) / n
	}
	r.putP99 = time.Duration(lat.ValueAtQuantile(99))
	return r, nil
}

// load sends open-loop puts at rate for o.duration: put i is due at
// start + i/rate, handed to the first free of o.clients clients; its
// latency counts from its due time.
func load(ctx context.Context, cli *clientv3.Client, o options, rate float64) (puts, errs int64, lat *hdr.Histogram, elapsed time.Duration) {
	lat = hdr.New(1, int64(time.Minute), 3)
	var mu sync.Mutex
	var nPuts, nErrs atomic.Int64
	val := make([]byte, o.valBytes)
	rand.Read(val)
	prefix := make([]byte, 8)
	rand.Read(prefix)
	due := make(chan struct {
		i int64
		t time.Time
	}, 1<<16)
	var wg sync.WaitGroup
	for range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := make([]byte, o.keyBytes)
			for d := range due {
				copy(key, fmt.Sprintf("/device-cost/%x/%016d/", prefix, d.i))
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := cli.Put(pctx, string(key), string(val))
				cancel()
				if err != nil {
					nErrs.Add(1)
					continue
				}
				nPuts.Add(1)
				mu.Lock()
				lat.RecordValue(int64(time.Since(d.t)))
				mu.Unlock()
			}
		}()
	}
	start := time.Now()
	total := int64(rate * o.duration.Seconds())
	for i := int64(0); i < total && ctx.Err() == nil; i++ {
		t := start.Add(time.Duration(float64(i) / rate * 1e9))
		if d := time.Until(t); d > 0 {
			time.Sleep(d)
		}
		due <- struct {
			i int64
			t time.Time
		}{i, t}
	}
	close(due)
	wg.Wait()
	return nPuts.Load(), nErrs.Load(), lat, time.Since(start)
}

func startEmbedded(ctx context.Context, dir string) (*etcdProc, error) {
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: dir, Members: 1, OwnProcess: true})
	if err != nil {
		return nil, err
	}
	return &etcdProc{endpoint: c.Endpoints()[0], metrics: c.MetricsURLs()[0], stop: c.Close}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startDebian(ctx context.Context, bin, dir string) (*etcdProc, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("Debian's etcd: %w", err)
	}
	cp, err := freePort()
	if err != nil {
		return nil, err
	}
	pp, err := freePort()
	if err != nil {
		return nil, err
	}
	cu, pu := fmt.Sprintf("http://127.0.0.1:%d", cp), fmt.Sprintf("http://127.0.0.1:%d", pp)
	cmd := exec.Command(bin, "--name", "dc", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "dc="+pu, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "ETCD_UNSUPPORTED_ARCH="+os.Getenv("ETCD_UNSUPPORTED_ARCH"))
	logf, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logf.Close() }()
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			return <-done
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := metrics.Scrape(ctx, nil, cu+"/metrics"); err == nil {
			cli, err := clientv3.New(clientv3.Config{Endpoints: []string{cu}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
			if err == nil {
				pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err = cli.Put(pctx, "/device-cost/ready", "1")
				cancel()
				cli.Close()
				if err == nil {
					return &etcdProc{endpoint: cu, metrics: cu + "/metrics", stop: stop}, nil
				}
			}
		}
		select {
		case err := <-done:
			b, _ := os.ReadFile(filepath.Join(dir, "etcd.log"))
			return nil, fmt.Errorf("Debian's etcd exited (%v): %s", err, tail(string(b)))
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, errors.New("Debian's etcd did not serve within 30 s")
		}
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// deviceOf returns the kernel name and MAJ:MIN of the whole disk that
// holds dir.
func deviceOf(dir string) (name, majmin string, err error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return "", "", err
	}
	maj, mnr := unix.Major(st.Dev), unix.Minor(st.Dev)
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", maj, mnr)
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		sys = filepath.Join(sys, "..")
	}
	link, err := filepath.EvalSymlinks(sys)
	if err != nil {
		return "", "", fmt.Errorf("the device of %s: %w", dir, err)
	}
	b, err := os.ReadFile(filepath.Join(link, "dev"))
	if err != nil {
		return "", "", err
	}
	return filepath.Base(link), strings.TrimSpace(string(b)), nil
}

// cgroup is a cgroup v1 blkio child this process runs in while it measures.
type cgroup struct{ dir, majmin string }

const blkioRoot = "/sys/fs/cgroup/blkio"

func newCgroup() (*cgroup, error) {
	dir := filepath.Join(blkioRoot, fmt.Sprintf("device-cost-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the blkio cgroup (cgroup v1, root): %w", err)
	}
	c := &cgroup{dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("joining %s: %w", dir, err)
	}
	return c, nil
}

func (c *cgroup) setCap(majmin string, iops int) error {
	c.majmin = majmin
	return os.WriteFile(filepath.Join(c.dir, "blkio.throttle.write_iops_device"), []byte(fmt.Sprintf("%s %d", majmin, iops)), 0)
}

// writes returns the cgroup's write I/Os and bytes on its device so far.
func (c *cgroup) writes() (ios, bytes uint64, err error) {
	read := func(f string) (uint64, error) {
		fd, err := os.Open(filepath.Join(c.dir, f))
		if err != nil {
			return 0, err
		}
		defer fd.Close()
		s := bufio.NewScanner(fd)
		for s.Scan() {
			x := strings.Fields(s.Text())
			if len(x) == 3 && x[0] == c.majmin && x[1] == "Write" {
				return strconv.ParseUint(x[2], 10, 64)
			}
		}
		return 0, s.Err()
	}
	if ios, err = read("blkio.throttle.io_serviced"); err != nil {
		return
	}
	bytes, err = read("blkio.throttle.io_service_bytes")
	return
}

// remove moves this process back to the root cgroup and removes the child
// (its other members, the etcds, have stopped).
func (c *cgroup) remove() {
	if c.majmin != "" {
		os.WriteFile(filepath.Join(c.dir, "blkio.throttle.write_iops_device"), []byte(c.majmin+" 0"), 0)
	}
	os.WriteFile(filepath.Join(blkioRoot, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0)
	for i := 0; i < 50; i++ {
		if err := os.Remove(c.dir); err == nil || os.IsNotExist(err) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "device-cost: could not remove %s\n", c.dir)
}

// measureModel runs etcdbench capacity's model of etcd at each rate, with
// the same counters around it (no /metrics: the model's own figures).
func measureModel(ctx context.Context, o options, scratch, dev string, cg *cgroup) ([]row, error) {
	cp, err := diskmodel.PresetNamed("default")
	if err != nil {
		return nil, err
	}
	cp.Shape = diskmodel.PutShape{KeyBytes: o.keyBytes, ValueBytes: o.valBytes}
	cp.EntryBytes = cp.Shape.WALEntryBytes()
	cp.Clients = o.clients
	var rows []row
	for i, rate := range o.rates {
		dir := filepath.Join(scratch, fmt.Sprintf("rate-%d", i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return rows, err
		}
		c0, err := readDevice(dev, cg)
		if err != nil {
			return rows, err
		}
		s, err := diskmodel.RunCapacityStep(ctx, dir, cp, rate, o.duration)
		c1, err2 := readDevice(dev, cg)
		os.RemoveAll(dir)
		if err != nil {
			return rows, err
		}
		if err2 != nil {
			return rows, err2
		}
		puts := int64(math.Round(s.Achieved * float64(s.DurationNs) / 1e9))
		n := float64(max(puts, 1))
		r := row{etcd: "model", rate: rate, achieved: s.Achieved, puts: puts,
			devW: float64(c1.ds.WriteIOs-c0.ds.WriteIOs) / n, devB: float64(c1.ds.WriteSectors-c0.ds.WriteSectors) * 512 / n,
			devF: float64(c1.ds.FlushIOs-c0.ds.FlushIOs) / n, cgW: float64(c1.cgW-c0.cgW) / n, cgB: float64(c1.cgB-c0.cgB) / n,
			walSyncs: float64(s.Syncs) / n, commits: float64(s.BackendCommits) / n,
			walP99: time.Duration(s.SyncP99Ns), commitP99: time.Duration(s.BackendCommitP99Ns), putP99: time.Duration(s.CommitP99Ns)}
		if s.EntriesPerSync > 0 {
			r.walBytes = s.BytesPerSync / s.EntriesPerSync
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func readDevice(dev string, cg *cgroup) (counters, error) {
	var c counters
	var err error
	c.t = time.Now()
	if c.ds, err = sysinfo.ReadDiskstats("/", dev); err != nil {
		return c, err
	}
	c.cgW, c.cgB, err = cg.writes()
	return c, err
}
