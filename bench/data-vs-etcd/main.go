// Command data-vs-etcd (bench/data-vs-etcd/run) checks what
// `etcdbench diagnose data` predicts a member's data costs on its disk
// against a real etcd: Debian's etcd 3.4 and the embedded etcd of go.mod,
// each a process of its own, with dbs of several sizes on the same disk.
// The dbs are filled as kube-apiserver writes (testutil/kubedata:
// protobuf objects under /registry, leases, a compaction, then ConfigMaps
// up to the size). For each member and round it stops the member, runs
// `etcdbench diagnose data --data-dir` on it for the predictions, drops
// the page cache, and times the restart (process start to /health true),
// its snapshot sent to a new member (a learner of its own process,
// removed again; the leader's and the learner's own metrics of the
// send), `etcdctl defrag` and `etcdctl snapshot save`; and it times the analysis
// of each etcd's largest db (--predict=false) with its peak memory.
// Goals: each prediction within 1.5x of the median measured, over 3
// rounds; the largest db analysed in <= 30 s with <= 200 MB.
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
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/testutil/kubedata"
	"etcdbench/internal/units"
)

const name = "data-vs-etcd"

// Goals, as data with their source.
const (
	ratioGoal    = 1.5
	goalSource   = "issue 33: the predicted restart, defragmentation and snapshot sent to a new member within 1.5x of a real etcd's, 3 rounds"
	analysisWall = 30.0  // s, a 1 GB db
	analysisRSS  = 200e6 // bytes, a 1 GB db
	speedSource  = "issue 33: a 1 GB db analysed in <= 30 s with <= 200 MB"
)

type options struct {
	cmp.Common
	Sizes   []int64 // the dbs' target sizes
	ValSize int     // bytes of data per ConfigMap the fill adds
	Clients int
	Debian  string
	Etcdctl string
	Keep    bool // keep the filled data dirs in --dir/data, and reuse those there
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds = true, cmp.MinRounds
	o := options{Common: c, ValSize: 1500, Clients: 32, Debian: "/usr/bin/etcd", Etcdctl: "/usr/bin/etcdctl"}
	sizes := "100MB,400MB,1GB"
	err = cmp.ParseFlags(name, "what diagnose data predicts a member's restart, defragmentation and snapshot cost, against a real etcd 3.4 and the embedded etcd with dbs of several sizes.", &o.Common, args, stderr,
		func(fs *flag.FlagSet) {
			fs.StringVar(&sizes, "sizes", sizes, "the dbs' sizes, comma-separated")
			fs.IntVar(&o.ValSize, "val-size", o.ValSize, "bytes of data in each ConfigMap the fill adds")
			fs.IntVar(&o.Clients, "clients", o.Clients, "writers at once while filling")
			fs.StringVar(&o.Debian, "debian-etcd", o.Debian, "the etcd 3.4 binary")
			fs.StringVar(&o.Etcdctl, "etcdctl", o.Etcdctl, "the etcdctl that defragments and saves snapshots (of both etcds)")
			fs.BoolVar(&o.Keep, "keep", o.Keep, "keep the filled data dirs in --dir/data, and reuse those found there instead of filling")
		})
	if err != nil {
		return o, err
	}
	o.Sizes, err = parseSizes(sizes)
	if err != nil {
		return o, cmp.UsageError{Err: err}
	}
	return o, nil
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

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	startLoad, _ := cmp.LoadAverage()
	began := time.Now()
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
	for _, k := range []kind{debianKind(o.Debian), embeddedKind(helper)} {
		for _, size := range o.Sizes {
			m, err := newMember(k, filepath.Join(data, cmp.Slug(k.Name+" "+units.FormatBytes(size))), units.FormatBytes(size))
			if err != nil {
				return err
			}
			members = append(members, m)
			if _, err := os.Stat(m.dataDir); err == nil && o.Keep {
				fmt.Fprintf(stderr, "reusing %s\n", m.dataDir)
			} else if err := fill(ctx, m, size, o, stderr); err != nil {
				return err
			}
			if err := ensureSnapshot(ctx, m, stderr); err != nil {
				return err
			}
		}
	}
	var obs []observation
	var ans []analysis
	for n := 1; n <= o.Rounds; n++ {
		for _, m := range cmp.Alternate(n, members) {
			ob, err := measure(ctx, m, env.Dir, env.Etcdbench, o.Etcdctl, stderr)
			ob.Round = n
			obs = append(obs, ob)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", n, m.kind.Name, err)
			}
		}
		for i := len(o.Sizes) - 1; i < len(members); i += len(o.Sizes) {
			a, err := analyse(ctx, env.Etcdbench, members[i])
			a.Round = n
			ans = append(ans, a)
			if err != nil {
				return fmt.Errorf("round %d, analysing %s: %w", n, members[i].dataDir, err)
			}
		}
	}
	table, figs := render(obs, ans)
	fmt.Fprint(stdout, table)
	if o.JSON != "" {
		if err := cmp.WriteJSON(o.Abs(o.JSON), map[string]any{"rounds": obs, "analyses": ans}); err != nil {
			return err
		}
	}
	return cmp.SaveResult(o.Abs(o.Results), cmp.Result{Bench: name, Source: "bench/data-vs-etcd/run " + strings.Join(o.Args, " "),
		Machine: cmp.Machine(env.Dir), Rounds: o.Rounds, Figures: figs, Table: table}, startLoad, began)
}

// fill starts m on an empty data dir and writes a kube-apiserver-like
// key space into it (kubedata's small one: nodes and their leases,
// pods, events with leases, Helm releases, custom resources, a
// compaction), then ConfigMaps of ValSize bytes until its db is size
// bytes, and stops it.
func fill(ctx context.Context, m *member, size int64, o options, stderr io.Writer) error {
	fmt.Fprintf(stderr, "filling %s to %s ...\n", m.kind.Name, units.FormatBytes(size))
	if _, err := m.start(ctx); err != nil {
		return err
	}
	cfg := kubedata.Small()
	cfg.ValueBytes, cfg.TargetBytes, cfg.Clients = o.ValSize, size, o.Clients
	t0 := time.Now()
	err := m.withClient(func(cli *clientv3.Client) error {
		w, err := kubedata.Write(ctx, cli, cfg)
		fmt.Fprintf(stderr, "  %d ConfigMaps added, revision %d, in %v\n", w.Fill, w.Revision, time.Since(t0).Round(time.Second))
		return err
	})
	return errors.Join(err, m.stop())
}
