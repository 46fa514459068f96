// Command memory-vs-etcd (bench/memory-vs-etcd/run) checks what
// `etcdbench diagnose data` predicts LISTs cost a member's resident
// memory against a real etcd: Debian's etcd 3.4 and the embedded etcd of
// go.mod, each a process of its own, filled as kube-apiserver writes
// (testutil/kubedata) with one large resource (ConfigMaps of --val-size
// bytes) up to dbs of several sizes. For each member and round it starts
// the member afresh and runs `etcdbench diagnose data --endpoints` on it
// for the prediction, then, on the member started afresh for each case,
// sends k full LISTs of the largest resource at once (k = 1, 4, 8) and 4
// paginated ones, sampling the member's VmRSS every 10 ms: the truth is
// the peak. Then, for each etcd at the OOM sizes, the member runs in a
// cgroup v1 memory cgroup whose limit lies a few LISTs above its idle
// memory: k = 1, 2, ... full LISTs until the kernel kills it, against
// diagnose data's concurrent_full_lists of the member in that cgroup.
// Goals: each case's median ratio predicted/truth within 1.25x over 3
// rounds; the OOM at concurrent_full_lists + 1, within one.
//
// It is a measurement, not a test: the exit status is 0 whatever the
// figures, 1 when a tool failed to run, 2 for bad flags, 130 when
// interrupted. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/testutil/kubedata"
	"etcdbench/internal/units"
)

const name = "memory-vs-etcd"

// Goals, as data with their source.
const (
	ratioGoal  = 1.25
	goalSource = "issue 45: the predicted peak resident memory of LISTs within 1.25x of a real etcd's, 3 rounds"
	oomSource  = "issue 45: the member OOM-killed at concurrent_full_lists + 1 full LISTs at once, within one"
)

type options struct {
	cmp.Common
	Sizes    []int64 // the dbs' target sizes
	OOMSizes []int64 // the sizes of the OOM check (a subset of Sizes)
	ValSize  int     // bytes of data per ConfigMap the fill adds
	Clients  int
	Debian   string
	Etcds    []string // kinds' slugs, in order
	Ks       []int    // full LISTs at once, one case each
	Paged    int      // paginated LISTs at once (0: no such case)
	Settle   time.Duration
	OOM      bool
	OOMLists float64 // the OOM check's limit: idle + this many LISTs
	MaxK     int
	Keep     bool // keep the filled data dirs in --dir/data, and reuse those there
	// Client is what sends the LISTs: clientCount or clientFull.
	Client string
	// TailWrites are the node Lease renewals after the fill (see fill).
	TailWrites int
}

// cases are the measurements of each member and round.
func (o options) cases() []listCase {
	var cs []listCase
	for _, k := range o.Ks {
		cs = append(cs, listCase{K: k})
	}
	if o.Paged > 0 {
		cs = append(cs, listCase{K: o.Paged, Paged: true})
	}
	return cs
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds = true, cmp.MinRounds
	o := options{Common: c, ValSize: 100 << 10, Clients: 16, Debian: "/usr/bin/etcd", Paged: 4, Settle: time.Second,
		OOM: true, OOMLists: 2.5, MaxK: 10, Client: clientCount, TailWrites: 11000}
	sizes, oomSizes, etcds, ks := "100MB,400MB", "", "debian,embedded", "1,4,8"
	err = cmp.ParseFlags(name, "what diagnose data predicts LISTs cost a member's resident memory, against a real etcd 3.4 and the embedded etcd with dbs of several sizes, and the number of full LISTs at once that OOM-kills a member in a memory cgroup.", &o.Common, args, stderr,
		func(fs *flag.FlagSet) {
			fs.StringVar(&sizes, "sizes", sizes, "the dbs' sizes, comma-separated (1GB: a member and its LISTs need several GiB)")
			fs.StringVar(&oomSizes, "oom-sizes", oomSizes, "the sizes of the OOM check, comma-separated, each one of --sizes (default: the smallest)")
			fs.IntVar(&o.ValSize, "val-size", o.ValSize, "bytes of data in each ConfigMap the fill adds: the large resource")
			fs.IntVar(&o.Clients, "clients", o.Clients, "writers at once while filling")
			fs.StringVar(&o.Debian, "debian-etcd", o.Debian, "the etcd 3.4 binary")
			fs.StringVar(&etcds, "etcds", etcds, "the etcds: debian, embedded, or both, comma-separated")
			fs.StringVar(&ks, "k", ks, "full LISTs at once, one case each, comma-separated")
			fs.IntVar(&o.Paged, "paged", o.Paged, "paginated LISTs at once (500 objects a page), one case; 0: none")
			fs.DurationVar(&o.Settle, "settle", o.Settle, "how long a started member idles before its memory is read")
			fs.BoolVar(&o.OOM, "oom", o.OOM, "run the OOM check (root: a cgroup v1 memory cgroup)")
			fs.Float64Var(&o.OOMLists, "oom-lists", o.OOMLists, "the OOM check's limit: the member's idle memory and this many full LISTs' predicted cost at once")
			fs.IntVar(&o.MaxK, "max-k", o.MaxK, "the OOM check's most full LISTs at once")
			fs.BoolVar(&o.Keep, "keep", o.Keep, "keep the filled data dirs in --dir/data, and reuse those found there instead of filling")
			fs.StringVar(&o.Client, "client", o.Client, "what sends the LISTs: count (a gRPC codec that counts each response and drops it) or clientv3 (its Get, every response unmarshalled, as diagnose data's probe)")
			fs.IntVar(&o.TailWrites, "tail-writes", o.TailWrites, "node Lease renewals after the fill: more than --snapshot-count (10000) put the member's last raft snapshot after the large objects; 0 leaves them in the log a restarted member replays into memory")
		})
	if err != nil {
		return o, err
	}
	if o.Sizes, err = parseSizes(sizes); err != nil {
		return o, cmp.UsageError{Err: err}
	}
	o.OOMSizes = o.Sizes[:1]
	if oomSizes != "" {
		if o.OOMSizes, err = parseSizes(oomSizes); err != nil {
			return o, cmp.UsageError{Err: err}
		}
		for _, s := range o.OOMSizes {
			if !contains(o.Sizes, s) {
				return o, cmp.UsageError{Err: fmt.Errorf("--oom-sizes %s: not one of --sizes", units.FormatBytes(s))}
			}
		}
	}
	if o.Ks, err = parseInts(ks); err != nil {
		return o, cmp.UsageError{Err: fmt.Errorf("-k %q: %w", ks, err)}
	}
	for _, e := range strings.Split(etcds, ",") {
		if e = strings.TrimSpace(e); e != "debian" && e != "embedded" {
			return o, cmp.UsageError{Err: fmt.Errorf("--etcds %q: want debian, embedded or both", etcds)}
		}
		o.Etcds = append(o.Etcds, e)
	}
	switch {
	case o.ValSize < 1024:
		return o, cmp.UsageError{Err: fmt.Errorf("--val-size %d: want at least 1024", o.ValSize)}
	case o.Clients < 1, o.Paged < 0, o.MaxK < 1, o.Settle < 0:
		return o, cmp.UsageError{Err: errors.New("--clients and --max-k must be positive, --paged and --settle not negative")}
	case o.Client != clientCount && o.Client != clientFull:
		return o, cmp.UsageError{Err: fmt.Errorf("--client %q: want %s or %s", o.Client, clientCount, clientFull)}
	case o.TailWrites < 0:
		return o, cmp.UsageError{Err: fmt.Errorf("--tail-writes %d: want 0 or more", o.TailWrites)}
	case o.OOMLists < 1:
		return o, cmp.UsageError{Err: fmt.Errorf("--oom-lists %g: want at least 1", o.OOMLists)}
	}
	return o, nil
}

func contains(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// parseSizes reads "100MB,1GB" into ascending byte counts.
func parseSizes(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		n, err := units.ParseSize(strings.TrimSpace(f))
		if err != nil || n < 1<<20 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("--sizes %q: want ascending sizes of at least 1 MiB (%v)", s, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseInts reads "1,4,8" into positive integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, errors.New("want positive integers, comma-separated")
		}
		out = append(out, n)
	}
	return out, nil
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	startLoad, _ := cmp.LoadAverage()
	began := time.Now()
	if o.OOM {
		if err := removeStale(); err != nil {
			return err
		}
	}
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	bin, err := os.MkdirTemp("", name+"-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	// The embedded etcd is bench/data-vs-etcd's member helper: go.mod's
	// etcd as a process of its own, on a data dir it keeps.
	helper := filepath.Join(bin, "etcd-member")
	if _, err := cmp.RunChild(ctx, nil, "go", "build", "-o", helper, "./bench/data-vs-etcd/member"); err != nil {
		return err
	}
	data := filepath.Join(env.Dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	if !o.Keep {
		defer func() { err = errors.Join(err, os.RemoveAll(data)) }()
	}
	var members []*member
	defer func() {
		for _, m := range members {
			err = errors.Join(err, m.stop())
		}
	}()
	kinds := map[string]kind{"debian": debianKind(o.Debian), "embedded": embeddedKind(helper)}
	for _, e := range o.Etcds {
		k := kinds[e]
		for _, size := range o.Sizes {
			m, err := newMember(k, filepath.Join(data, cmp.Slug(k.Name+" "+units.FormatBytes(size))), size, units.FormatBytes(size))
			if err != nil {
				return err
			}
			members = append(members, m)
			if _, err := os.Stat(filepath.Join(m.dataDir, "member")); err == nil && o.Keep {
				fmt.Fprintf(stderr, "reusing %s\n", m.dataDir)
			} else if err := fill(ctx, m, size, o, stderr); err != nil {
				return err
			}
		}
	}
	var obs []observation
	var ooms []oomCheck
	defer func() {
		if o.JSON != "" {
			err = errors.Join(err, cmp.WriteJSON(o.Abs(o.JSON), map[string]any{"rounds": obs, "oom": ooms}))
		}
	}()
	for n := 1; n <= o.Rounds; n++ {
		for _, m := range cmp.Alternate(n, members) {
			ob, err := measure(ctx, m, o, env.Etcdbench, env.Dir, stderr)
			ob.Round = n
			obs = append(obs, ob)
			if err != nil {
				return fmt.Errorf("round %d, %s %s: %w", n, m.kind.Name, m.target, err)
			}
		}
	}
	if o.OOM {
		for _, m := range members {
			if !contains(o.OOMSizes, m.size) {
				continue
			}
			base := firstPrediction(obs, m)
			oc, err := checkOOM(ctx, m, base, o, env.Etcdbench, env.Dir, stderr)
			ooms = append(ooms, oc)
			if err != nil {
				return fmt.Errorf("the OOM check of %s %s: %w", m.kind.Name, m.target, err)
			}
		}
	}
	table, figs := render(obs, ooms)
	fmt.Fprint(stdout, table)
	return cmp.SaveResult(o.Abs(o.Results), cmp.Result{Bench: name, Source: "bench/memory-vs-etcd/run " + strings.Join(o.Args, " "),
		Machine: cmp.Machine(env.Dir), Rounds: o.Rounds, Figures: figs, Table: table}, startLoad, began)
}

// firstPrediction is m's prediction of its first round.
func firstPrediction(obs []observation, m *member) prediction {
	for _, ob := range obs {
		if ob.Etcd == m.kind.Name && ob.Target == m.target {
			return ob.Predicted
		}
	}
	return prediction{}
}

// fill starts m on an empty data dir and writes a kube-apiserver-like key
// space into it (kubedata's small one: nodes and their leases, pods,
// events with leases, Helm releases, custom resources, a compaction),
// with ConfigMaps and Secrets of ValSize bytes, then ConfigMaps of
// ValSize bytes until its db is size bytes, then TailWrites node Lease
// renewals (by default more than --snapshot-count, so that the member's
// last raft snapshot comes after the large objects), and stops it.
func fill(ctx context.Context, m *member, size int64, o options, stderr io.Writer) error {
	fmt.Fprintf(stderr, "filling %s to %s ...\n", m.kind.Name, units.FormatBytes(size))
	if err := os.RemoveAll(m.dataDir); err != nil {
		return err
	}
	if err := m.start(ctx, nil); err != nil {
		return err
	}
	cfg := kubedata.Small()
	cfg.ValueBytes, cfg.TargetBytes, cfg.Clients = o.ValSize, size, o.Clients
	beats := kubedata.Config{Nodes: cfg.Nodes, NodeLeaseWrites: o.TailWrites, Clients: o.Clients, Seed: 2}
	t0 := time.Now()
	err := m.withClient(func(cli *clientv3.Client) error {
		w, err := kubedata.Write(ctx, cli, cfg)
		if err != nil {
			return err
		}
		rev := w.Revision
		if o.TailWrites > 0 {
			b, err := kubedata.Write(ctx, cli, beats)
			if err != nil {
				return err
			}
			rev = b.Revision
		}
		fmt.Fprintf(stderr, "  %d ConfigMaps added, revision %d, in %v\n", w.Fill, rev, time.Since(t0).Round(time.Second))
		return nil
	})
	if err = errors.Join(err, m.stop()); err != nil {
		return err
	}
	if ok, err := hasSnapshot(m.dataDir); (!ok || err != nil) && o.TailWrites > 10000 {
		return errors.Join(err, fmt.Errorf("%s took no raft snapshot while filled", m.dataDir))
	}
	return nil
}
