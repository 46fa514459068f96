package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/search"
)

// measurement is one round trip's measurements in one round.
type measurement struct {
	Round int           `json:"round"`
	RTT   time.Duration `json:"rtt_ns"`
	// Order is the order the measurements ran in, Load the 1-minute
	// load average as each started.
	Order        []string    `json:"order"`
	Load         []string    `json:"load"`
	Truth        *truth      `json:"truth,omitempty"`
	EtcdCapacity *sideAnswer `json:"etcd_capacity,omitempty"`
	Capacity     *sideAnswer `json:"capacity,omitempty"`
	// Notes are the measurements that failed, and why.
	Notes []string `json:"notes,omitempty"`
}

// measurer runs the measurements of a round.
type measurer struct {
	dir, etcdbench, etcd, benchmark string
	proxy                           *cmp.Toxiproxy
	o                               options
	progress                        io.Writer
	clusters                        int // clusters started, to name their proxies apart
}

// round runs round n's measurements at rtt, in its order
// (cmp.Alternate). A measurement that fails is a note; only an interrupt
// ends the round early.
func (m *measurer) round(ctx context.Context, n int, rtt time.Duration) (measurement, error) {
	ms := measurement{Round: n, RTT: rtt}
	type job struct {
		name string
		do   func() error
	}
	all := map[string]func() error{
		sideTruth: func() error {
			t, err := m.truth(ctx, rtt)
			if err == nil {
				ms.Truth = &t
			}
			return err
		},
		sideEtcdCapacity: func() error {
			a, err := runSide(ctx, m.etcdbench, m.dir, sideEtcdCapacity, m.o.Members, rtt, m.o.SideStep)
			if err == nil {
				ms.EtcdCapacity = &a
			}
			return err
		},
		sideCapacity: func() error {
			a, err := runSide(ctx, m.etcdbench, m.dir, sideCapacity, m.o.Members, rtt, "")
			if err == nil {
				ms.Capacity = &a
			}
			return err
		},
	}
	var jobs []job
	for _, s := range sideNames {
		if slices.Contains(m.o.Sides, s) {
			jobs = append(jobs, job{s, all[s]})
		}
	}
	for _, j := range cmp.Alternate(n, jobs) {
		ms.Order, ms.Load = append(ms.Order, j.name), append(ms.Load, loadavg())
		fmt.Fprintf(m.progress, "round %d, round trip %v: %s (load %s) ...\n", n, rtt, j.name, ms.Load[len(ms.Load)-1])
		start := time.Now()
		err := j.do()
		if ctx.Err() != nil {
			return ms, ctx.Err()
		}
		if err != nil {
			ms.Notes = append(ms.Notes, j.name+": "+oneLine(err.Error()))
			fmt.Fprintf(m.progress, "  %s failed: %v\n", j.name, err)
			continue
		}
		fmt.Fprintf(m.progress, "  %s: %s (%.0f s)\n", j.name, ms.answer(j.name), time.Since(start).Seconds())
	}
	return ms, nil
}

// answer is measurement which's rate and p99, for the progress lines.
func (ms measurement) answer(which string) string {
	rate, p99 := ms.rateP99(which)
	return fmt.Sprintf("%.0f puts/s, p99 %s", rate, fmtP99(p99))
}

// truth starts a cluster rtt apart, searches its highest passing rate
// and stops it.
func (m *measurer) truth(ctx context.Context, rtt time.Duration) (truth, error) {
	m.clusters++
	c, err := startCluster(ctx, m.proxy, m.dir, m.etcd, m.o.Members, m.clusters, rtt)
	if err != nil {
		return truth{}, err
	}
	s := stepper{benchmark: m.benchmark, keySize: m.o.KeySize, valSize: m.o.ValSize, dur: m.o.Step, lim: m.o.Limits, lat: m.o.Latency, all: m.o.Drive == "all"}
	srch := search.Search{Start: m.o.Start, Factor: 2, Resolution: 1.1, Min: 10, Max: 100_000, Vote: true}
	t, err := searchOn(ctx, c, s, srch, m.progress)
	if serr := c.stop(); err == nil {
		err = serr
	}
	return t, err
}

// loadavg is the 1-minute load average now, "?" when unknown.
func loadavg() string {
	l, err := cmp.LoadAverage()
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.2f", l)
}

// oneLine is s with its line breaks folded, for a note.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
