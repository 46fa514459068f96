// Command data-vs-etcd (bench/data-vs-etcd/run) checks what
// `etcdbench diagnose data` predicts a member's data costs on its disk
// against a real etcd: Debian's etcd 3.4 and the embedded etcd of go.mod,
// each a process of its own, with dbs of several sizes on the same disk.
// For each member and round it stops the member, predicts (package
// diagnose/data/cost, fed the sizes read from the stopped member's data
// dir), drops the page cache, and times the restart (process start to
// /health true), `etcdctl defrag` and `etcdctl snapshot save`. Goal:
// each prediction within 1.5x of the median measured, over 3 rounds.
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

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/units"
)

const name = "data-vs-etcd"

// Goals, as data with their source.
const (
	ratioGoal  = 1.5
	goalSource = "issue 33: the predicted restart, defragmentation and snapshot within 1.5x of a real etcd's, 3 rounds"
)

type options struct {
	cmp.Common
	Sizes     []int64 // the dbs' target sizes
	ValSize   int     // bytes per value the fill puts
	Conns     int
	Clients   int
	Debian    string
	Etcdctl   string
	Benchmark string
	Keep      bool // keep the filled data dirs in --dir/data, and reuse those there
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds = true, cmp.MinRounds
	o := options{Common: c, ValSize: 2048, Conns: 8, Clients: 64, Debian: "/usr/bin/etcd", Etcdctl: "/usr/bin/etcdctl"}
	sizes := "100MB,400MB,1GB"
	err = cmp.ParseFlags(name, "what diagnose data predicts a member's restart, defragmentation and snapshot cost, against a real etcd 3.4 and the embedded etcd with dbs of several sizes.", &o.Common, args, stderr,
		func(fs *flag.FlagSet) {
			fs.StringVar(&sizes, "sizes", sizes, "the dbs' sizes, comma-separated")
			fs.IntVar(&o.ValSize, "val-size", o.ValSize, "bytes per value benchmark put writes")
			fs.IntVar(&o.Conns, "conns", o.Conns, "benchmark's gRPC connections while filling")
			fs.IntVar(&o.Clients, "clients", o.Clients, "benchmark's clients while filling")
			fs.StringVar(&o.Debian, "debian-etcd", o.Debian, "the etcd 3.4 binary")
			fs.StringVar(&o.Etcdctl, "etcdctl", o.Etcdctl, "the etcdctl that defragments and saves snapshots (of both etcds)")
			fs.StringVar(&o.Benchmark, "benchmark", o.Benchmark, "etcd's benchmark tool; default: built as bench/internal/cmp builds it")
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
	bench := o.Abs(o.Benchmark)
	if bench == "" {
		if bench, _, err = cmp.BuildBenchmark(ctx, cmp.DefaultBenchmarkVersions, bin, stderr); err != nil {
			return err
		}
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
			m, err := newMember(k, filepath.Join(data, cmp.Slug(k.Name)+"-"+units.FormatBytes(size)))
			if err != nil {
				return err
			}
			members = append(members, m)
			if _, err := os.Stat(m.dataDir); err == nil && o.Keep {
				fmt.Fprintf(stderr, "reusing %s\n", m.dataDir)
				continue
			}
			if err := fill(ctx, m, bench, size, o, stderr); err != nil {
				return err
			}
		}
	}
	var obs []observation
	for n := 1; n <= o.Rounds; n++ {
		for _, m := range cmp.Alternate(n, members) {
			ob, err := measure(ctx, m, env.Dir, o.Etcdctl, stderr)
			ob.Round = n
			obs = append(obs, ob)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", n, m.kind.Name, err)
			}
		}
	}
	table, figs := render(obs)
	fmt.Fprint(stdout, table)
	if o.JSON != "" {
		if err := cmp.WriteJSON(o.Abs(o.JSON), obs); err != nil {
			return err
		}
	}
	return cmp.SaveResult(o.Abs(o.Results), cmp.Result{Bench: name, Source: "bench/data-vs-etcd/run " + strings.Join(o.Args, " "),
		Machine: cmp.Machine(env.Dir), Rounds: o.Rounds, Figures: figs, Table: table}, startLoad, began)
}

// revisionBytes is about what one revision of a valSize value takes in
// the db: bbolt puts whole revisions on 4 KiB leaf pages (a page holds
// at least two, its share of one that does not fit), the key bucket's
// overhead is some 120 bytes a revision.
func revisionBytes(valSize int) int64 {
	r := int64(valSize) + 120
	if r >= 2048 {
		return (r + 4095) / 4096 * 4096
	}
	return 4096 / (4096 / r)
}

// fill starts m on an empty data dir and puts with etcd's benchmark
// tool until its db is about size bytes (a revision of a ValSize value
// takes one 4 KiB page or a share of one), half as many keys as puts,
// then stops it.
func fill(ctx context.Context, m *member, bench string, size int64, o options, stderr io.Writer) error {
	perRev := revisionBytes(o.ValSize)
	puts := size / perRev
	m.revisions, m.keys = puts, max(puts/2, 1)
	fmt.Fprintf(stderr, "filling %s to %s: %d puts of %d bytes over %d keys ...\n", m.kind.Name, units.FormatBytes(size), puts, o.ValSize, m.keys)
	if _, err := m.start(ctx); err != nil {
		return err
	}
	_, err := cmp.RunChild(ctx, nil, bench, "--endpoints", m.client, "--conns", fmt.Sprint(o.Conns), "--clients", fmt.Sprint(o.Clients),
		"put", "--total", fmt.Sprint(puts), "--key-size", "32", "--val-size", fmt.Sprint(o.ValSize), "--key-space-size", fmt.Sprint(m.keys))
	return errors.Join(err, m.stop())
}
