package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/search"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil/zoo"
)

// measured is one etcdbench sweep's answer.
type measured struct {
	Rate, Upper float64
	// Disk and CPU are the two sides of capacity's estimate.
	Disk, CPU float64
	Bend      string
	Evidence  string
	Wall      float64
	Raw       json.RawMessage
}

// round is one round's measurements on one storage.
type round struct {
	N int `json:"round"`
	// Seed is the latency storages' seed in this round (params.Seed+N-1;
	// absent in older results: 1).
	Seed         uint64    `json:"seed,omitempty"`
	Capacity     *measured `json:"capacity,omitempty"`      // etcdbench capacity: the prediction
	EtcdCapacity *measured `json:"etcd_capacity,omitempty"` // etcdbench etcd capacity
	Truths       []truth   `json:"truths"`                  // the real etcds
	// Paired are --paired's measurements, a real etcd each: its truth
	// and etcdbench's etcd side on one member (Truths is then empty).
	Paired []pairedRun `json:"paired,omitempty"`
	// Load is the 1-minute load average when each measurement started, in
	// the order they ran.
	Load  []string `json:"load"`
	Order []string `json:"order"`
	Notes []string `json:"notes,omitempty"` // the storage's (a burst bucket's credits)
}

// row is one storage's rounds.
type row struct {
	Storage string  `json:"storage"`
	About   string  `json:"about"`
	Skipped string  `json:"skipped,omitempty"` // why the storage was not measured
	Rounds  []round `json:"rounds"`
}

// measurer runs every measurement of a storage.
type measurer struct {
	env      *cmp.Env
	dev      string
	o        options
	kinds    []etcdKind
	step     stepper
	search   search.Search
	progress io.Writer
}

// in sets the storage up afresh in a new directory, runs f in it and
// undoes it.
func (m measurer) in(ctx context.Context, st zoo.Storage, f func(p *zoo.Place) error, notes *[]string) (err error) {
	dir, err := os.MkdirTemp(m.env.Dir, st.Name+"-")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	p, err := st.Setup(ctx, dir)
	if err != nil {
		return err
	}
	defer func() {
		*notes = append(*notes, p.Notes()...)
		err = errors.Join(err, p.Close())
	}()
	return f(p)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// storage measures one storage over the rounds. A storage this machine
// cannot make is skipped with the reason.
func (m measurer) storage(ctx context.Context, st zoo.Storage) (row, error) {
	r := row{Storage: st.Name, About: st.About}
	for n := m.o.FirstRound; n < m.o.FirstRound+m.o.Rounds; n++ {
		rd := round{N: n, Seed: roundSeed(m.o.Seed, n)}
		st, err := seeded(st, rd.Seed)
		if err != nil {
			return r, err
		}
		type job struct {
			name string
			do   func(p *zoo.Place) error
		}
		var jobs []job
		for _, j := range []job{
			{"capacity", func(p *zoo.Place) error {
				c, err := sweep(ctx, p, m.env.Etcdbench, "capacity", "--quick", "--entry-bytes", strconv.Itoa(m.o.EntryBytes))
				rd.Capacity = &c
				return err
			}},
			{"etcd capacity", func(p *zoo.Place) error {
				c, err := sweep(ctx, p, m.env.Etcdbench, "etcd-capacity", "--step", m.o.EtcdStep, "--no-trace")
				rd.EtcdCapacity = &c
				return err
			}},
		} {
			if contains(strings.Split(m.o.Sweeps, ","), strings.ReplaceAll(j.name, " ", "-")) {
				jobs = append(jobs, j)
			}
		}
		for _, k := range m.kinds {
			if m.o.Paired {
				jobs = append(jobs, job{k.Name + " paired", func(p *zoo.Place) error {
					pr, err := m.paired(ctx, k, p, n)
					rd.Paired = append(rd.Paired, pr)
					return err
				}})
				continue
			}
			jobs = append(jobs, job{k.Name, func(p *zoo.Place) error {
				t, err := bisect(ctx, k, p, m.dev, m.step, m.search, m.progress)
				rd.Truths = append(rd.Truths, t)
				return err
			}})
		}
		for _, j := range cmp.Alternate(n, jobs) {
			rd.Order, rd.Load = append(rd.Order, j.name), append(rd.Load, loadavg())
			fmt.Fprintf(m.progress, "%s round %d: %s (load %s) ...\n", st.Name, n, j.name, rd.Load[len(rd.Load)-1])
			var notes []string
			err := m.in(ctx, st, j.do, &notes)
			for _, n := range notes {
				rd.Notes = append(rd.Notes, j.name+": "+n)
			}
			if errors.Is(err, zoo.ErrUnavailable) {
				r.Skipped = err.Error()
				fmt.Fprintf(m.progress, "%s: skipped: %v\n", st.Name, err)
				return r, nil
			}
			if err != nil {
				r.Rounds = append(r.Rounds, rd)
				return r, fmt.Errorf("%s round %d, %s: %w", st.Name, n, j.name, err)
			}
		}
		r.Rounds = append(r.Rounds, rd)
	}
	return r, nil
}

// roundSeed is round n's seed of the latency storages' draws.
func roundSeed(first uint64, n int) uint64 { return first + uint64(n-1) }

// seeded is the storage st with its draws seeded with seed.
func seeded(st zoo.Storage, seed uint64) (zoo.Storage, error) {
	s, err := zoo.Lookup(zoo.Seeded(seed), st.Name)
	if err != nil {
		return st, err
	}
	return s[0], nil
}

// sweep runs `etcdbench capacity` or `etcdbench etcd capacity` in p.
func sweep(ctx context.Context, p *zoo.Place, bin, which string, extra ...string) (measured, error) {
	args := []string{"capacity", "--dir", p.Dir, "--no-progress", "-o", "json"}
	if which == "etcd-capacity" {
		args = append([]string{"etcd"}, args...)
	}
	c, err := cmp.RunChildIn(ctx, []int{0, 1}, p.Wrap, bin, append(args, extra...)...)
	if err != nil {
		return measured{}, err
	}
	m, err := parseSweep(c.Stdout)
	if err != nil {
		return m, fmt.Errorf("%s on %s: %w", which, p.Dir, err)
	}
	m.Wall = c.Wall.Seconds()
	return m, nil
}

// parseSweep reads a capacity result: its capacity workload's rate, and
// where the result has capacity's estimate of etcd, that estimate and its
// two sides.
func parseSweep(b []byte) (measured, error) {
	r, err := result.Read(bytes.NewReader(b))
	if err != nil {
		return measured{}, err
	}
	for _, w := range r.Workloads {
		if cp := w.Capacity; cp != nil && w.Name != "cpu-capacity" {
			m := measured{Rate: cp.Rate, Upper: cp.Upper, Bend: string(cp.Bend), Evidence: cp.Evidence, Raw: cmp.RawJSON(b)}
			if e := cp.Etcd; e != nil {
				m.Rate, m.Upper, m.Bend = e.Rate, e.Upper, string(cp.Bend+", limited by "+e.LimitedBy)
				m.Evidence += "; " + e.Evidence
				m.Disk, m.CPU = e.DiskRate, e.CPURate
			}
			return m, nil
		}
	}
	return measured{}, errors.New("no capacity in the result")
}
