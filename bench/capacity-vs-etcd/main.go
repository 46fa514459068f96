// Command capacity-vs-etcd (bench/capacity-vs-etcd/run) measures how well `etcdbench capacity`
// predicts the highest put rate a real etcd sustains within its limits
// (`etcdbench etcd capacity`: an embedded etcd, a process of its own,
// under open-loop puts of etcdctl check perf's shape), on the same storage
// (issue 14). capacity's prediction is its estimate of etcd's rate: the
// lower of its two sides, the WAL's sweep on the storage and the CPUs'
// (an embedded etcd without fsync swept up to the disk's limit). It runs
// both commands on three storages:
//
//   - plain: the directory itself;
//   - rate-cap: a FUSE passthrough of it (internal/testutil/fusedelay)
//     whose syncs obey a token bucket of --cap syncs/s, burst 4, as a
//     cloud volume's IOPS limit;
//   - slow-sync: the same passthrough whose syncs wait --delay plus the
//     bytes written since the last sync at --bandwidth bytes/s, a slower
//     device whose sync time grows with what it flushes.
//
// The disk sweep runs --quick (a 20 % resolution); its entries are --entry-bytes (1400: a check perf put, a
// 256-byte key and a 1024-byte value, as a WAL record). For each storage
// it prints the estimate, its two sides, etcd's rate and the ratio
// predicted / real (goal: within 1.5x). Rounds alternate the order of the
// two runs. It is a measurement, not a test: exit 0 whatever the ratios,
// 1 when a tool failed to run, 2 for bad flags, 130 when interrupted.
// FUSE needs root and /dev/fuse.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil/fusedelay"
)

const name = "capacity-vs-etcd"

type params struct {
	Cap        float64 `json:"cap_syncs_per_sec"`
	Delay      string  `json:"delay"`
	Bandwidth  int64   `json:"bandwidth_bytes_per_sec"`
	EntryBytes int     `json:"entry_bytes"`
	Step       string  `json:"etcd_step"`
	Storages   string  `json:"storages"`
}

type options struct {
	cmp.Common
	params
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds = true, 3
	o := options{Common: c, params: params{Cap: 80, Delay: "2ms", Bandwidth: 1_000_000, EntryBytes: 1400, Step: "3s", Storages: "plain,rate-cap,slow-sync"}}
	err = cmp.ParseFlags(name, "How well `etcdbench capacity` predicts the put rate a real etcd sustains within its limits, on a plain and two slowed storages.", &o.Common, args, stderr,
		func(fs *flag.FlagSet) {
			fs.Float64Var(&o.Cap, "cap", o.Cap, "rate-cap storage: syncs per second of its token bucket")
			fs.StringVar(&o.Delay, "delay", o.Delay, "slow-sync storage: fixed wait of each sync")
			fs.Int64Var(&o.Bandwidth, "bandwidth", o.Bandwidth, "slow-sync storage: bytes per second each sync waits for what was written since the last")
			fs.IntVar(&o.EntryBytes, "entry-bytes", o.EntryBytes, "the disk sweep's entry size")
			fs.StringVar(&o.Step, "etcd-step", o.Step, "length of each etcd capacity step")
			fs.StringVar(&o.Storages, "storages", o.Storages, "the storages to measure, comma-separated: plain, rate-cap, slow-sync")
		})
	if err != nil {
		return o, err
	}
	if d, err := time.ParseDuration(o.Delay); err != nil || d < 0 {
		return o, cmp.UsageError{Err: fmt.Errorf("--delay %q: want a duration", o.Delay)}
	}
	for _, s := range strings.Split(o.Storages, ",") {
		if !slices.Contains([]string{"plain", "rate-cap", "slow-sync"}, s) {
			return o, cmp.UsageError{Err: fmt.Errorf("--storages: unknown storage %q (want plain, rate-cap, slow-sync)", s)}
		}
	}
	if o.Cap <= 0 || o.Bandwidth <= 0 || o.EntryBytes <= 0 {
		return o, cmp.UsageError{Err: fmt.Errorf("--cap, --bandwidth and --entry-bytes must be positive")}
	}
	return o, nil
}

// storage is one place both sweeps run.
type storage struct {
	Name  string `json:"name"`
	About string `json:"about"`
	dir   string
	close func() error
}

// measured is one sweep's answer.
type measured struct {
	Rate, Upper float64
	// Disk and CPU are the two sides of capacity's estimate.
	Disk, CPU float64
	Bend      string
	Evidence  string
	Wall      time.Duration
	Raw       json.RawMessage
}

type row struct {
	Storage   string     `json:"storage"`
	Predicted []float64  `json:"predicted"` // capacity's estimate of etcd's rate per round
	DiskSide  []float64  `json:"disk_side"` // its two sides
	CPUSide   []float64  `json:"cpu_side"`
	Real      []float64  `json:"real"` // etcd capacity per round
	Ratios    []float64  `json:"ratios"`
	Median    float64    `json:"median_ratio"`
	Bends     [][]string `json:"bends"`    // disk bend, etcd limit, per round
	Evidence  [][]string `json:"evidence"` // the same, in words
	DiskWall  []float64  `json:"disk_wall_s"`
	EtcdWall  []float64  `json:"etcd_wall_s"`
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	stores, err := makeStorages(env.Dir, o.params)
	defer func() {
		for _, s := range stores {
			if cerr := s.close(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	if err != nil {
		return err
	}
	var rows []row
	for _, s := range stores {
		if !slices.Contains(strings.Split(o.Storages, ","), s.Name) {
			continue
		}
		r := row{Storage: s.Name + ": " + s.About}
		for round := range o.Rounds {
			runs := []func() (measured, error){
				func() (measured, error) {
					return sweep(ctx, env.Etcdbench, "capacity", s.dir, "--quick", "--entry-bytes", fmt.Sprint(o.EntryBytes))
				},
				func() (measured, error) {
					return sweep(ctx, env.Etcdbench, "etcd-capacity", s.dir, "--step", o.Step, "--no-trace")
				},
			}
			order := []int{0, 1}
			if round%2 == 1 {
				order = []int{1, 0}
			}
			var got [2]measured
			for _, i := range order {
				fmt.Fprintf(stderr, "%s round %d: %s ...\n", s.Name, round+1, []string{"capacity", "etcd capacity"}[i])
				if got[i], err = runs[i](); err != nil {
					return err
				}
			}
			r.Predicted = append(r.Predicted, got[0].Rate)
			r.DiskSide, r.CPUSide = append(r.DiskSide, got[0].Disk), append(r.CPUSide, got[0].CPU)
			r.Real = append(r.Real, got[1].Rate)
			r.Ratios = append(r.Ratios, ratio(got[0].Rate, got[1].Rate))
			r.Bends = append(r.Bends, []string{got[0].Bend, got[1].Bend})
			r.Evidence = append(r.Evidence, []string{got[0].Evidence, got[1].Evidence})
			r.DiskWall = append(r.DiskWall, got[0].Wall.Seconds())
			r.EtcdWall = append(r.EtcdWall, got[1].Wall.Seconds())
		}
		r.Median = median(r.Ratios)
		rows = append(rows, r)
	}
	print(stdout, rows)
	if o.JSON != "" {
		return cmp.WriteJSON(o.JSON, map[string]any{"params": o.params, "rows": rows})
	}
	return nil
}

// makeStorages returns the plain directory and the two FUSE storages,
// each on a subdirectory of dir.
func makeStorages(dir string, p params) ([]storage, error) {
	stores := []storage{{Name: "plain", About: "the directory itself", dir: dir, close: func() error { return nil }}}
	delay, _ := time.ParseDuration(p.Delay)
	for _, s := range []struct {
		name, about string
		set         func(*fusedelay.FS)
	}{
		{"rate-cap", fmt.Sprintf("syncs capped at %g/s (token bucket, burst 4)", p.Cap), func(f *fusedelay.FS) { f.SetRateCap(p.Cap, 4) }},
		{"slow-sync", fmt.Sprintf("each sync waits %v + its bytes at %d B/s", delay, p.Bandwidth), func(f *fusedelay.FS) { f.SetDelay(delay); f.SetBandwidth(p.Bandwidth) }},
	} {
		backing, mount := filepath.Join(dir, s.name+"-backing"), filepath.Join(dir, s.name)
		for _, d := range []string{backing, mount} {
			if err := os.Mkdir(d, 0o700); err != nil {
				return stores, err
			}
		}
		f, err := fusedelay.New(backing, mount, 0)
		if err != nil {
			return stores, errors.Join(err, os.Remove(mount), os.RemoveAll(backing))
		}
		s.set(f)
		stores = append(stores, storage{Name: s.name, About: s.about, dir: mount, close: func() error {
			if err := f.Close(); err != nil {
				return err
			}
			return errors.Join(os.Remove(mount), os.RemoveAll(backing))
		}})
	}
	return stores, nil
}

// sweep runs `etcdbench capacity` or `etcdbench etcd capacity` on dir.
func sweep(ctx context.Context, bin, which, dir string, extra ...string) (measured, error) {
	args := []string{"capacity", "--dir", dir, "--no-progress", "-o", "json"}
	if which == "etcd-capacity" {
		args = append([]string{"etcd"}, args...)
	}
	c, err := cmp.RunChild(ctx, []int{0, 1}, bin, append(args, extra...)...)
	if err != nil {
		return measured{}, err
	}
	r, err := result.Read(bytes.NewReader(c.Stdout))
	if err != nil {
		return measured{}, fmt.Errorf("%s on %s: %w", which, dir, err)
	}
	for _, w := range r.Workloads {
		if cp := w.Capacity; cp != nil && w.Name != "cpu-capacity" {
			m := measured{Rate: cp.Rate, Upper: cp.Upper, Bend: string(cp.Bend), Evidence: cp.Evidence, Wall: c.Wall}
			if e := cp.Etcd; e != nil {
				// capacity's estimate of etcd's rate: the lower of the
				// disk's side and the CPUs' side.
				m.Rate, m.Upper, m.Bend = e.Rate, e.Upper, string(cp.Bend+", limited by "+e.LimitedBy)
				m.Evidence += "; " + e.Evidence
				m.Disk, m.CPU = e.DiskRate, e.CPURate
			}
			return m, nil
		}
	}
	return measured{}, fmt.Errorf("%s on %s: no capacity in the result", which, dir)
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return math.Inf(1)
	}
	return a / b
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[len(s)/2]
}

func print(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "storage\tpredicted (capacity's estimate, puts/s)\tdisk side\tCPU side\treal (etcd capacity, puts/s)\tratio median\twithin 1.5x\tbends (capacity / etcd)\twall capacity / etcd capacity (s)")
	for _, r := range rows {
		ok := r.Median >= 1/1.5 && r.Median <= 1.5
		fmt.Fprintf(tw, "%s\t%v\t%v\t%v\t%v\t%.2f\t%v\t%v\t%v / %v\n", r.Storage, r.Predicted, r.DiskSide, r.CPUSide, r.Real, r.Median, ok, r.Bends, r.DiskWall, r.EtcdWall)
	}
	tw.Flush()
}
