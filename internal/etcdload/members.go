package etcdload

import (
	"context"
	"net/http"
	"time"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/result"
)

// What the members' /metrics say of their CPU and their proposal backlog.
const (
	// ProcessCPUMetric is the Prometheus client's CPU time of the
	// member's process (user and system, from /proc/self/stat).
	ProcessCPUMetric = "process_cpu_seconds_total"
	// GOMAXPROCSMetric is the Go runtime's GOMAXPROCS: the CPUs the
	// member can run on at once.
	GOMAXPROCSMetric = "go_sched_gomaxprocs_threads"
	// ProposalsPendingMetric counts requests this member proposed and has
	// not yet applied (a gauge).
	ProposalsPendingMetric = "etcd_server_proposals_pending"
	// ProposalsCommittedMetric and ProposalsAppliedMetric are the raft
	// commit and apply indexes (gauges, despite "_total"): their gap is
	// what is committed and waits for the apply loop.
	ProposalsCommittedMetric = "etcd_server_proposals_committed_total"
	ProposalsAppliedMetric   = "etcd_server_proposals_applied_total"
)

// cpuFigures are one target's CPU figures between two scrapes window
// apart: name_cpu (CPUs used) and name_cores (its GOMAXPROCS). The CPU is
// the member process's: etcdbench runs every embedded member in a child
// process of its own (a member inside the load generator's process, as
// some tests start, would count the load generator's CPU too).
func cpuFigures(name string, before, after metrics.Families, window time.Duration) []result.Figure {
	var out []result.Figure
	b, berr := metrics.ValueOf(before, ProcessCPUMetric)
	a, aerr := metrics.ValueOf(after, ProcessCPUMetric)
	if berr == nil && aerr == nil && a >= b && window > 0 {
		out = append(out, result.Figure{Name: name + "_cpu", Value: (a - b) / window.Seconds(), Unit: "x",
			Description: "CPUs the member's process used between the scrapes around the load (process_cpu_seconds_total, in 10 ms ticks)"})
	}
	if v, err := metrics.ValueOf(after, GOMAXPROCSMetric); err == nil && v > 0 {
		out = append(out, result.Figure{Name: name + "_cores", Value: v, Unit: "count",
			Description: "CPUs the member's Go runtime runs on at once (GOMAXPROCS, go_sched_gomaxprocs_threads)"})
	}
	return out
}

// backlog is the largest proposal backlog a target's samples showed.
type backlog struct {
	pending, unapplied float64
	samples            int
}

// observe takes one scrape's gauges into b.
func (b *backlog) observe(f metrics.Families) {
	p, perr := metrics.ValueOf(f, ProposalsPendingMetric)
	c, cerr := metrics.ValueOf(f, ProposalsCommittedMetric)
	a, aerr := metrics.ValueOf(f, ProposalsAppliedMetric)
	if perr != nil && (cerr != nil || aerr != nil) {
		return
	}
	b.samples++
	if perr == nil {
		b.pending = max(b.pending, p)
	}
	if cerr == nil && aerr == nil {
		b.unapplied = max(b.unapplied, c-a)
	}
}

// backlogSampler scrapes every target once an interval while a load runs
// and keeps the largest proposal backlog of each: a gauge read only
// before and after the load would miss it, since it drains as soon as
// the clients stop.
type backlogSampler struct {
	ts   []MetricsTarget
	stop func()
	done chan struct{}
	max  []backlog // written by the sampling goroutine until done
}

// startBacklog starts sampling ts every interval until finish.
func startBacklog(ctx context.Context, client *http.Client, ts []MetricsTarget, every time.Duration) *backlogSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &backlogSampler{ts: ts, stop: cancel, done: make(chan struct{}), max: make([]backlog, len(ts))}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for i, t := range ts {
				sctx, cancel := context.WithTimeout(ctx, every)
				f, err := metrics.Scrape(sctx, client, t.URL)
				cancel()
				if err != nil {
					continue // a missed sample, not a failed load
				}
				s.max[i].observe(f)
			}
		}
	}()
	return s
}

// finish stops the sampling and returns each target's figures:
// name_proposals_pending_max and name_proposals_unapplied_max.
func (s *backlogSampler) finish() []result.Figure {
	s.stop()
	<-s.done
	var out []result.Figure
	for i, t := range s.ts {
		b := s.max[i]
		if b.samples == 0 {
			continue
		}
		out = append(out,
			result.Figure{Name: t.Name + "_proposals_pending_max", Value: b.pending, Unit: "count",
				Description: "the most requests this member had proposed and not yet applied (etcd_server_proposals_pending) in any sample during the load"},
			result.Figure{Name: t.Name + "_proposals_unapplied_max", Value: b.unapplied, Unit: "count",
				Description: "the most entries committed but not yet applied (etcd_server_proposals_committed_total - etcd_server_proposals_applied_total) in any sample during the load"},
			result.Figure{Name: t.Name + "_backlog_samples", Value: float64(b.samples), Unit: "count",
				Description: "samples of the member's /metrics taken during the load for its proposal backlog"},
		)
	}
	return out
}
