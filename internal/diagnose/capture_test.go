package diagnose

// The captures under testdata/ were made by TestCapture (run with
// ETCDBENCH_CAPTURE=1; see testdata/README.md): real etcds - Debian's
// etcd 3.4 as a process and the embedded etcd 3.7 of etcdcluster - under a
// put load, on a plain directory or on a FUSE passthrough whose fsyncs
// wait (internal/testutil/fusedelay), with the leader of three paused
// (SIGSTOP), or filled to a tiny --quota-backend-bytes.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/fusedelay"
)

// etcdProc is a running Debian etcd process.
type etcdProc struct {
	Endpoint string
	cmd      *exec.Cmd
	done     chan struct{}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEtcdProc starts /usr/bin/etcd with its data in dataDir, its
// log (zap JSON or capnslog text) in log and the extra flags, and stops
// it at cleanup.
func startEtcdProc(t *testing.T, dataDir, logger string, log io.Writer, extra ...string) *etcdProc {
	t.Helper()
	peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	p := launchEtcd(t, "capture", dataDir, logger, log, peer, "capture="+peer, extra...)
	p.waitHealthy(t)
	return p
}

// launchEtcd starts one member of the cluster initial without waiting.
func launchEtcd(t *testing.T, name, dataDir, logger string, log io.Writer, peer, initial string, extra ...string) *etcdProc {
	t.Helper()
	bin := os.Getenv(captureBinEnv)
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("etcd"); err != nil {
			t.Skip("etcd is not on PATH (Debian: apt-get install etcd-server)")
		}
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "--name", name, "--data-dir", dataDir, "--logger", logger, "--log-outputs", "stderr",
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", initial)
	cmd.Args = append(cmd.Args, extra...)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &etcdProc{Endpoint: client, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	return p
}

func (p *etcdProc) waitHealthy(t *testing.T) {
	t.Helper()
	testutil.WaitFor(t, 30*time.Second, p.Endpoint+" healthy", func() bool {
		select {
		case <-p.done:
			t.Fatalf("etcd exited at start")
		default:
		}
		return p.healthy()
	})
}

// healthy reports whether p answers its /health with 200 (a member with
// a leader).
func (p *etcdProc) healthy() bool {
	resp, err := http.Get(p.Endpoint + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// metricValue is the value of the first sample of a scrape b whose line
// starts with series (a name, or a name and the start of its labels),
// and whether there is one.
func metricValue(b []byte, series string) (float64, bool) {
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, series) {
			continue
		}
		if i := strings.LastIndexByte(l, ' '); i > 0 {
			v, err := strconv.ParseFloat(l[i+1:], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// settled scrapes url (the kept families) until etcd's WAL fsync and
// backend commit counts hold still between two scrapes: what a load
// left to sync (the last commit) is in the scrape returned.
func settled(t *testing.T, url string) []byte {
	t.Helper()
	var prev, cur []byte
	counts := func(b []byte) [2]float64 {
		w, _ := metricValue(b, "etcd_disk_wal_fsync_duration_seconds_count ")
		c, _ := metricValue(b, "etcd_disk_backend_commit_duration_seconds_count ")
		return [2]float64{w, c}
	}
	testutil.WaitFor(t, 30*time.Second, "etcd's sync counts to hold still at "+url, func() bool {
		prev, cur = cur, scrapeKept(t, url)
		return prev != nil && counts(prev) == counts(cur)
	})
	return cur
}

func (p *etcdProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGCONT)
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// pause stops p with SIGSTOP for d, as a member starved of CPU or in a
// paused VM stops.
func (p *etcdProc) pause(t *testing.T, d time.Duration) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d) // the pause itself: the simulated starvation
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// leaderOf returns the index of the member that says it leads, -1 if
// none does. Every member must be running (a stopped one would not
// answer).
func leaderOf(t *testing.T, ps []*etcdProc) int {
	t.Helper()
	for i, p := range ps {
		if bytes.Contains(scrapeKept(t, p.Endpoint+"/metrics"), []byte("\netcd_server_is_leader 1\n")) {
			return i
		}
	}
	return -1
}

// launchCluster starts three Debian etcd members logging with logger into
// their own buffers, with the extra flags, and waits until all are
// healthy.
func launchCluster(t *testing.T, logger string, extra ...string) ([]*etcdProc, []*lockedBuffer) {
	t.Helper()
	var peers, initial []string
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
		initial = append(initial, fmt.Sprintf("m%d=%s", i, peers[i]))
	}
	var ps []*etcdProc
	var logs []*lockedBuffer
	for i := range 3 {
		logs = append(logs, &lockedBuffer{})
		ps = append(ps, launchEtcd(t, fmt.Sprintf("m%d", i), filepath.Join(memDir(t), "data"), logger, logs[i], peers[i], strings.Join(initial, ","), extra...))
	}
	for _, p := range ps {
		p.waitHealthy(t)
	}
	return ps, logs
}

// wholeLines cuts b after its last line end (a log read while etcd
// writes may end inside a line).
func wholeLines(b []byte) []byte {
	return b[:bytes.LastIndexByte(b, '\n')+1]
}

// fillToQuota puts 64 KiB values into the etcd at endpoint until it
// refuses one with "database space exceeded" (the NOSPACE alarm), then
// once more (refused by the alarm itself); it returns the puts accepted.
func fillToQuota(t *testing.T, endpoint string, quota int) int {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	value := strings.Repeat("q", 64<<10)
	// etcd checks the db size of its last commit, which lags the puts:
	// it takes several times the quota in puts.
	most := 16 * quota / len(value)
	for i := range most {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := c.Put(ctx, fmt.Sprintf("/capture/quota/%d", i), value)
		cancel()
		if err == nil {
			continue
		}
		if !strings.Contains(err.Error(), "database space exceeded") {
			t.Fatalf("put %d: %v, want database space exceeded", i, err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		_, again := c.Put(ctx, "/capture/quota/again", "v")
		cancel()
		t.Logf("put %d refused: %v; the next: %v", i, err, again)
		return i
	}
	t.Fatalf("%d puts of %d bytes under a %d-byte quota, none refused", most, len(value), quota)
	return 0
}

// The raft timing of the paused-leader captures: a pause of
// heartbeatPause is over twice the heartbeat interval (etcd's late
// heartbeat warning) and under the election timeout; one of
// leaderLossPause is over the longest randomized election timeout (2 x
// the timeout), so the followers lose the leader and elect another.
const (
	captureHeartbeat = 100 * time.Millisecond
	captureElection  = 2 * time.Second
	heartbeatPause   = time.Second
	leaderLossPause  = 5 * time.Second
)

// captureQuota is --quota-backend-bytes of the NOSPACE capture (etcd 3.4
// takes any positive size; 1 MiB is refused after 45 to 75 puts of
// 64 KiB).
const captureQuota = 1 << 20

// putLoad sends puts from clients goroutines for about d; requests in
// flight at the end finish (a cancelled put would count as a failed
// proposal and a failed gRPC request).
func putLoad(t *testing.T, endpoint string, clients int, d time.Duration) int {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; time.Now().Before(end); j++ {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := c.Put(ctx, fmt.Sprintf("/capture/%d/%d", i, j%100), strings.Repeat("v", 256))
				cancel()
				if err == nil {
					mu.Lock()
					n++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return n
}

// startEmbedJSON starts etcd 3.7 in this process with etcd's own zap
// JSON logging to logPath, as the etcd binary logs by default.
func startEmbedJSON(t *testing.T, dataDir, logPath string) (stop func(), endpoint string) {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "capture", dataDir
	cfg.Logger, cfg.LogOutputs, cfg.LogLevel = "zap", []string{logPath}, "info"
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = "capture=" + pu.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(e.Close) }
	t.Cleanup(stop)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("embedded etcd not ready in 30 s")
	}
	return stop, cu.String()
}

// capturedMetrics are the metric name prefixes kept in the captures
// (what the diagnosis reads), so that they stay small.
var capturedMetrics = []string{"etcd_disk_", "etcd_debugging_mvcc_db_compaction_pause", "etcd_server_", "etcd_network_peer_", "etcd_mvcc_db_total_size", "process_", "go_gc_duration", "go_sched_gomaxprocs", "grpc_server_handled_total"}

// scrapeKept scrapes url and keeps the families of capturedMetrics.
func scrapeKept(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		name := strings.TrimPrefix(strings.TrimPrefix(l, "# HELP "), "# TYPE ")
		if strings.HasPrefix(l, "grpc_server_handled_total{") && strings.HasSuffix(l, " 0") {
			continue // zero series count from zero anyway
		}
		for _, p := range capturedMetrics {
			if strings.HasPrefix(name, p) {
				out.WriteString(l + "\n")
				break
			}
		}
	}
	return out.Bytes()
}

// memDir is a directory in memory (/dev/shm) where fdatasync is never
// slow, so that a healthy capture does not depend on how loaded this
// machine's disk is; t's temporary directory when there is no /dev/shm.
func memDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/dev/shm", "etcdbench-capture-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func write(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote testdata/%s (%d bytes)", name, len(b))
}

// lockedBuffer is a log sink safe for etcd's writes and the test's reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}

// captureBinEnv names the etcd binary a capture runs instead of the etcd
// on PATH.
const captureBinEnv = "ETCDBENCH_CAPTURE_BIN"

func TestCapture(t *testing.T) {
	if os.Getenv("ETCDBENCH_CAPTURE") == "" {
		t.Skip("set ETCDBENCH_CAPTURE=1 to capture testdata/ from real etcds again")
	}
	t.Run("etcd34 three members, the leader paused", func(t *testing.T) {
		var peers, initial []string
		for i := range 3 {
			peers = append(peers, fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
			initial = append(initial, fmt.Sprintf("m%d=%s", i, peers[i]))
		}
		var ps []*etcdProc
		for i := range 3 {
			ps = append(ps, launchEtcd(t, fmt.Sprintf("m%d", i), filepath.Join(memDir(t), "data"), "zap", io.Discard, peers[i], strings.Join(initial, ",")))
		}
		var eps []string
		for _, p := range ps {
			p.waitHealthy(t)
			eps = append(eps, p.Endpoint)
		}
		// Peer round trips measured before the window: each member has
		// probed a peer.
		for _, p := range ps {
			testutil.WaitFor(t, 30*time.Second, p.Endpoint+"'s first peer round trip", func() bool {
				v, ok := metricValue(scrapeKept(t, p.Endpoint+"/metrics"), "etcd_network_peer_round_trip_time_seconds_count{")
				return ok && v > 0
			})
		}
		for i, p := range ps {
			write(t, fmt.Sprintf("etcd34-3m-before-m%d.txt", i), scrapeKept(t, p.Endpoint+"/metrics"))
		}
		leader := -1
		for i, p := range ps {
			if bytes.Contains(scrapeKept(t, p.Endpoint+"/metrics"), []byte("etcd_server_is_leader 1")) {
				leader = i
			}
		}
		if leader < 0 {
			t.Fatal("no leader")
		}
		// Pause the leader for 3 s (three election timeouts) under load:
		// the others elect a new leader, the paused one's peers see
		// round trips of seconds.
		go func() {
			// The schedule of the pause under the load: these sleeps are
			// the simulated starvation, not waits for something.
			time.Sleep(time.Second)
			ps[leader].cmd.Process.Signal(syscall.SIGSTOP)
			time.Sleep(3 * time.Second)
			ps[leader].cmd.Process.Signal(syscall.SIGCONT)
		}()
		other := ps[(leader+1)%3].Endpoint
		t.Logf("leader m%d paused; %d puts", leader, putLoad(t, other, 4, 6*time.Second))
		// The paused member is back: every member healthy (with a
		// leader) again.
		testutil.WaitFor(t, 30*time.Second, "every member healthy after the pause", func() bool {
			for _, p := range ps {
				if !p.healthy() {
					return false
				}
			}
			return true
		})
		for i, p := range ps {
			write(t, fmt.Sprintf("etcd34-3m-after-m%d.txt", i), scrapeKept(t, p.Endpoint+"/metrics"))
		}
	})
	// Debian's etcd 3.4 with both of its loggers, then the other
	// versions given as ETCDBENCH_CAPTURE_VERSIONS=35=/path/etcd,36=...
	// (zap only: 3.5 removed capnslog) - see testdata/README.md.
	type build struct{ tag, bin, logger string }
	builds := []build{{"34", "", "zap"}, {"34", "", "capnslog"}}
	for _, kv := range strings.Split(os.Getenv("ETCDBENCH_CAPTURE_VERSIONS"), ",") {
		if tag, bin, ok := strings.Cut(kv, "="); ok {
			builds = append(builds, build{tag, bin, "zap"})
		}
	}
	for _, b := range builds {
		logger, name := b.logger, "etcd"+b.tag
		setBin := func(t *testing.T) {
			if b.bin != "" {
				t.Setenv(captureBinEnv, b.bin)
			}
		}
		t.Run(name+" "+logger+" logs of three members, the leader paused", func(t *testing.T) {
			setBin(t)
			ps, logs := launchCluster(t, logger,
				"--heartbeat-interval", fmt.Sprint(captureHeartbeat.Milliseconds()), "--election-timeout", fmt.Sprint(captureElection.Milliseconds()))
			leader := -1
			testutil.WaitFor(t, 30*time.Second, "a leader", func() bool { leader = leaderOf(t, ps); return leader >= 0 })
			t.Logf("%d puts", putLoad(t, ps[leader].Endpoint, 2, time.Second))
			ps[leader].pause(t, heartbeatPause)
			// Not a wait for a condition: the leader must stay through
			// this window (the pause is under the election timeout).
			time.Sleep(2 * time.Second)
			if l := leaderOf(t, ps); l != leader {
				t.Fatalf("the leader moved from m%d to m%d after a %v pause, under the election timeout", leader, l, heartbeatPause)
			}
			heartbeat := wholeLines(logs[leader].Bytes())
			ps[leader].pause(t, leaderLossPause)
			next := -1
			testutil.Poll(30*time.Second, func() bool { next = leaderOf(t, ps); return next >= 0 && next != leader })
			if next < 0 || next == leader {
				t.Fatalf("leader m%d after m%d was paused for %v", next, leader, leaderLossPause)
			}
			// Taken before the members stop: a leader that stops hands
			// its leadership over, which would be another election.
			lost := wholeLines(logs[next].Bytes())
			write(t, name+"-"+logger+"-heartbeat.log", heartbeat)
			write(t, name+"-"+logger+"-leaderloss.log", lost)
		})
		t.Run(name+" "+logger+" log of a db filled to its quota", func(t *testing.T) {
			setBin(t)
			log := &lockedBuffer{}
			p := startEtcdProc(t, filepath.Join(memDir(t), "data"), logger, log, "--quota-backend-bytes", fmt.Sprint(captureQuota))
			t.Logf("%d puts accepted", fillToQuota(t, p.Endpoint, captureQuota))
			testutil.WaitFor(t, 30*time.Second, "the NOSPACE alarm in etcd's log", func() bool { return bytes.Contains(log.Bytes(), []byte("NOSPACE")) })
			p.stop()
			write(t, name+"-"+logger+"-nospace.log", log.Bytes())
		})
		t.Run(name+" "+logger+" log on a disk with 1.1 s fsyncs", func(t *testing.T) {
			setBin(t)
			m := fusedelay.Mount(t, memDir(t), 0)
			log := &lockedBuffer{}
			p := startEtcdProc(t, filepath.Join(m.Dir, "data"), logger, log)
			m.SetDelay(1100 * time.Millisecond)
			t.Logf("%d puts", putLoad(t, p.Endpoint, 4, 5*time.Second))
			m.SetDelay(0)
			p.stop()
			write(t, name+"-"+logger+"-slowdisk.log", log.Bytes())
		})
	}
	t.Run("etcd34 metrics and zap log", func(t *testing.T) {
		log := &lockedBuffer{}
		p := startEtcdProc(t, filepath.Join(memDir(t), "data"), "zap", log)
		write(t, "etcd34-before.txt", scrapeKept(t, p.Endpoint+"/metrics"))
		t.Logf("%d puts", putLoad(t, p.Endpoint, 4, 4*time.Second))
		write(t, "etcd34-after.txt", settled(t, p.Endpoint+"/metrics"))
		p.stop()
		write(t, "etcd34-zap.log", log.Bytes())
	})
	for _, c := range []struct {
		name  string
		delay time.Duration
	}{{"etcd37", 0}, {"etcd37-slowdisk", 30 * time.Millisecond}} {
		t.Run(c.name+" metrics", func(t *testing.T) {
			dir := memDir(t)
			if c.delay > 0 {
				dir = fusedelay.Mount(t, dir, c.delay).Dir
			}
			cl, err := etcdcluster.Start(context.Background(), etcdcluster.Options{Dir: dir, LogLevel: "info"})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			url := cl.MetricsURLs()[0]
			write(t, c.name+"-before.txt", scrapeKept(t, url))
			t.Logf("%d puts", putLoad(t, cl.Endpoints()[0], 16, 4*time.Second))
			write(t, c.name+"-after.txt", settled(t, url))
		})
	}
	t.Run("etcd37 zap log on a disk with 1.1 s fsyncs", func(t *testing.T) {
		m := fusedelay.Mount(t, memDir(t), 0)
		logPath := filepath.Join(t.TempDir(), "etcd.log")
		stop, endpoint := startEmbedJSON(t, filepath.Join(m.Dir, "data"), logPath)
		m.SetDelay(1100 * time.Millisecond)
		t.Logf("%d puts", putLoad(t, endpoint, 4, 5*time.Second))
		m.SetDelay(0)
		stop()
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		write(t, "etcd37-zap-slowdisk.log", b)
	})
}
