package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"syscall"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/etcdload"
)

// The faults.
const (
	faultKill      = "kill-leader"
	faultStop      = "stop-leader"
	faultPartition = "partition-leader"
	faultDefrag    = "defrag-leader"
)

var faultNames = []string{faultKill, faultStop, faultPartition, faultDefrag}

// defragLimit bounds the leader's defragmentation.
const defragLimit = 5 * time.Minute

// lateAfter is check perf's slowest-request limit: a put that returned
// later than this from its due time (or failed) is late.
const lateAfter = 500 * time.Millisecond

// truthRun is what one fault cost a real cluster, as the probe saw it.
type truthRun struct {
	// Leader is the member that led when the fault struck, NewLeader the
	// first other member that said it led ("" when none did).
	Leader    string `json:"leader"`
	NewLeader string `json:"new_leader,omitempty"`
	// Times are from the fault (FaultAt, the run's clock); FaultEnd is
	// when it ended: the killed member served again, the stopped one was
	// continued, the cut healed.
	FaultAt time.Time `json:"fault_at"`
	// InjectSeconds is how long the injection took (the signal; the
	// iptables-restore transaction); the fault is timed from its end.
	InjectSeconds float64 `json:"inject_s"`
	FaultEnd      float64 `json:"fault_end_s"`
	// NewLeaderSeconds is from the fault to another member saying it
	// leads (null: none did).
	NewLeaderSeconds cmp.JSONFloat `json:"new_leader_s"`
	// RestartSeconds is from the killed member's new process to its
	// /health saying true (kill-leader; null otherwise).
	RestartSeconds cmp.JSONFloat `json:"restart_s"`
	// DefragSeconds is how long the leader's Defragment call took
	// (defrag-leader; null otherwise), DBSizeBytes its db's size before
	// it and DBSizeAfter after, FillKeys and FillSeconds the fill before
	// the load.
	DefragSeconds cmp.JSONFloat `json:"defrag_s"`
	DBSizeBytes   int64         `json:"db_size_bytes,omitempty"`
	DBSizeAfter   int64         `json:"db_size_after_bytes,omitempty"`
	FillKeys      int64         `json:"fill_keys,omitempty"`
	FillSeconds   float64       `json:"fill_s,omitempty"`
	Outage        outage        `json:"outage"`
	OutageSeconds float64       `json:"outage_s"`
	// LateUntil is from the fault to the completion of its last late
	// put (0: none): puts that still waited, for a proposal the lost
	// leader never answered or at the cut-off member, after others were
	// served again.
	LateUntil float64 `json:"late_until_s"`
	// LateAfterEnd counts the puts due after the fault ended that were
	// late (a disruption at the heal, say), AfterEndOutage the longest
	// outage among them (longestOutage).
	LateAfterEnd   int     `json:"late_after_end"`
	AfterEndOutage float64 `json:"after_end_outage_s"`
	// Terms is how far the raft term advanced: the elections the fault
	// cost.
	Terms uint64 `json:"terms"`
	// AtEnd is every member's status just before the fault ended (a
	// frozen member gives none): the cut-off leader's term and index
	// against the others' show how cut off it was.
	AtEnd []memberStatus `json:"status_at_fault_end,omitempty"`
	// Drops are the packets each partition rule matched.
	Drops map[string]int64 `json:"partition_drops,omitempty"`
	Puts  int              `json:"puts"`
	// P99Before is the probe's put p99 (from the due time) over the
	// --before window; P99During that of the puts due from the fault to
	// the end of the outage or of the fault, whichever is later, a failed
	// put counted at the time its client waited for the failure (as
	// etcdbench's put_p99_during).
	P99Before cmp.JSONFloat `json:"p99_before_s"`
	P99During cmp.JSONFloat `json:"p99_during_s"`
	// Load is etcd's benchmark's summary of the background load ("" and
	// zeros when it was stopped at the probe's end, as it is unless the
	// fault ended early).
	Load     loadSummary `json:"load"`
	Wall     float64     `json:"wall_s"`
	Timeline []probePut  `json:"timeline,omitempty"`
}

// loadSummary is the background load as benchmark reported it.
type loadSummary struct {
	Offered  float64 `json:"offered_puts_per_sec"`
	Achieved float64 `json:"achieved_puts_per_sec,omitempty"`
	Errors   int64   `json:"errors,omitempty"`
	// Stopped says it was still running at the probe's end and was
	// stopped there (no summary then); EndedEarly that it ended before
	// the probe did (its planned length was shorter than the drill).
	Stopped    bool   `json:"stopped_at_probe_end,omitempty"`
	EndedEarly bool   `json:"ended_before_probe,omitempty"`
	Broken     string `json:"broken,omitempty"`
}

// probePut is a put in the --json file's timeline: due (seconds from the
// fault), its latency (seconds) and its error.
type probePut struct {
	Due  float64 `json:"due_s"`
	Took float64 `json:"took_s"`
	Err  string  `json:"err,omitempty"`
}

// truthDrill runs one fault on a fresh cluster.
type truthDrill struct {
	etcd, benchmark string
	dir             string
	cg              *cgroups
	fw              *firewall
	o               options
	progress        io.Writer
}

// run starts a cluster with p's timeouts, loads it with etcd's benchmark
// and the probe, strikes fault after --before once the members agree on
// a leader, ends the fault, keeps the load --after more, and stops the
// cluster.
func (d truthDrill) run(ctx context.Context, p profile, fault string) (tr truthRun, err error) {
	began := time.Now()
	c, err := startCluster(ctx, d.dir, d.etcd, 3, p, d.o.PreVote, d.cg)
	if err != nil {
		return tr, err
	}
	defer func() { err = errors.Join(err, c.stop()) }()
	if fault == faultDefrag {
		// The db filled before the load, as etcdbench drill fills its
		// own: what the defragmentation copies.
		t0 := time.Now()
		if tr.FillKeys, err = fill(ctx, c.endpoints(), d.o.DBSize); err != nil {
			return tr, err
		}
		tr.FillSeconds = time.Since(t0).Seconds()
	}
	pr, err := newProbe(c.endpoints(), d.o.ProbeEvery, d.o.RequestTimeout, d.o.ValSize)
	if err != nil {
		return tr, err
	}
	defer pr.close()

	// The background load: check perf's clients at --rate over every
	// member, planned for the drill's length and some slack, stopped at
	// the probe's end.
	preset := etcdload.CheckPresetAt(d.o.Rate)
	conns, clients := preset.Conns, preset.Clients
	if d.o.Clients > 0 {
		clients, conns = d.o.Clients, min(conns, d.o.Clients)
	}
	planned := d.o.Before + d.o.FaultFor + d.o.RequestTimeout + d.o.After + 10*time.Second
	load := cmp.RatePut{Endpoint: strings.Join(c.endpoints(), ","), Conns: conns, Clients: clients, Rate: d.o.Rate, Dur: planned,
		KeySize: d.o.KeySize, ValSize: d.o.ValSize}
	tr.Load.Offered = d.o.Rate
	lctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	type loadEnd struct {
		r   cmp.RatePutRun
		err error
	}
	loadDone := make(chan loadEnd, 1)
	go func() { r, err := cmp.RunRatePut(lctx, d.benchmark, load); loadDone <- loadEnd{r, err} }()
	loadWaited := false
	defer func() {
		if !loadWaited { // benchmark is reaped before the cluster stops
			stopLoad()
			<-loadDone
		}
	}()

	stopProbe := make(chan struct{})
	probeDone := make(chan []put, 1)
	go func() { probeDone <- pr.run(ctx, stopProbe) }()
	stopped := false
	endProbe := func() []put {
		if !stopped {
			close(stopProbe)
			stopped = true
		}
		return <-probeDone
	}
	defer func() {
		if !stopped {
			endProbe()
		}
	}()

	sleep := func(dur time.Duration) error {
		select {
		case <-time.After(dur):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := sleep(d.o.Before); err != nil {
		return tr, err
	}
	lead, term0, err := c.steadyLeader(ctx, 30*time.Second)
	if err != nil {
		return tr, err
	}
	tr.Leader = c.names[lead]
	m := c.members[lead]

	var newLeader <-chan leaderSeen
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var faultEnd time.Time
	switch fault {
	case faultKill:
		t0 := time.Now()
		if err := m.Kill(ctx); err != nil {
			return tr, fmt.Errorf("killing the leader: %w", err)
		}
		tr.FaultAt = t0
		tr.InjectSeconds = time.Since(t0).Seconds()
		newLeader = c.watchLeader(watchCtx, lead)
		// etcdbench's drill restarts the member once another leads.
		select {
		case s := <-newLeader:
			tr.NewLeader, tr.NewLeaderSeconds = c.names[s.member], cmp.JSONFloat(s.at.Sub(tr.FaultAt).Seconds())
		case <-time.After(d.o.FaultFor + d.o.RequestTimeout):
		case <-ctx.Done():
			return tr, ctx.Err()
		}
		r0 := time.Now()
		if err := m.Restart(); err != nil {
			return tr, fmt.Errorf("restarting the leader: %w", err)
		}
		served, err := c.waitServing(ctx, lead, time.Minute)
		if err != nil {
			return tr, err
		}
		tr.RestartSeconds = cmp.JSONFloat(served.Sub(r0).Seconds())
		faultEnd = served
	case faultStop, faultPartition:
		var cut, heal func() error
		if fault == faultStop {
			cut = func() error { return m.Signal(syscall.SIGSTOP) }
			heal = func() error { return m.Signal(syscall.SIGCONT) }
		} else {
			if d.fw == nil || d.cg == nil {
				return tr, errors.New("no firewall for the partition")
			}
			peer, err := c.peerPort(lead)
			if err != nil {
				return tr, err
			}
			var others []int
			for i := range c.members {
				if i != lead {
					p, err := c.peerPort(i)
					if err != nil {
						return tr, err
					}
					others = append(others, p)
				}
			}
			cut = func() error { return d.fw.cutOff(ctx, peer, d.cg.Path(lead), others) }
			heal = d.fw.heal
		}
		t0 := time.Now()
		cerr := cut()
		healed := false
		defer func() {
			if !healed {
				err = errors.Join(err, heal())
			}
		}()
		if cerr != nil {
			return tr, cerr
		}
		tr.FaultAt = time.Now()
		if fault == faultStop {
			tr.FaultAt = t0 // the signal acts as it is sent
		}
		tr.InjectSeconds = time.Since(t0).Seconds()
		newLeader = c.watchLeader(watchCtx, lead)
		if err := sleep(time.Until(tr.FaultAt.Add(d.o.FaultFor))); err != nil {
			return tr, err
		}
		tr.AtEnd = c.statuses(ctx, lead, fault == faultStop)
		if fault == faultPartition {
			tr.Drops = d.fw.drops(ctx)
		}
		healed = true
		if err := heal(); err != nil {
			return tr, err
		}
		faultEnd = time.Now()
	case faultDefrag:
		// etcd's Maintenance API on the leader's own endpoint; the fault
		// ends when the call returns.
		if st, err := c.statusOf(ctx, lead, 5*time.Second); err == nil {
			tr.DBSizeBytes = st.DbSize
		}
		newLeader = c.watchLeader(watchCtx, lead)
		dctx, cancel := context.WithTimeout(ctx, defragLimit)
		tr.FaultAt = time.Now()
		_, derr := c.status[lead].Defragment(dctx, c.members[lead].URL)
		faultEnd = time.Now()
		cancel()
		if derr != nil {
			return tr, fmt.Errorf("defragmenting the leader: %w", derr)
		}
		tr.DefragSeconds = cmp.JSONFloat(faultEnd.Sub(tr.FaultAt).Seconds())
		if st, err := c.statusOf(ctx, lead, 5*time.Second); err == nil {
			tr.DBSizeAfter = st.DbSize
		}
	default:
		return tr, fmt.Errorf("unknown fault %q", fault)
	}
	tr.FaultEnd = faultEnd.Sub(tr.FaultAt).Seconds()
	if err := sleep(time.Until(faultEnd.Add(d.o.After))); err != nil {
		return tr, err
	}
	puts := endProbe()
	stopWatch()
	if tr.NewLeader == "" {
		select {
		case s := <-newLeader:
			tr.NewLeader, tr.NewLeaderSeconds = c.names[s.member], cmp.JSONFloat(s.at.Sub(tr.FaultAt).Seconds())
		default:
			tr.NewLeaderSeconds = cmp.JSONFloat(math.NaN())
			if fault == faultDefrag {
				// The leader kept its place: 0, as etcdbench says it.
				tr.NewLeaderSeconds = 0
			}
		}
	}
	if fault != faultKill {
		tr.RestartSeconds = cmp.JSONFloat(math.NaN())
	}
	if fault != faultDefrag {
		tr.DefragSeconds = cmp.JSONFloat(math.NaN())
	}
	loadWaited = true
	select {
	case l := <-loadDone:
		tr.Load.EndedEarly = true
		if l.err != nil {
			return tr, fmt.Errorf("the background load: %w", l.err)
		}
		tr.Load.Achieved, tr.Load.Errors, tr.Load.Broken = l.r.Report.OpsPerSec, l.r.Report.Errors, l.r.Broken
	default:
		stopLoad()
		<-loadDone
		tr.Load.Stopped = true
	}
	if term1 := c.term(ctx); term1 >= term0 {
		tr.Terms = term1 - term0
	}

	tr.Puts = len(puts)
	tr.Outage = findOutage(puts, tr.FaultAt, lateAfter)
	tr.OutageSeconds = tr.Outage.Seconds()
	if !tr.Outage.LateUntil.IsZero() {
		tr.LateUntil = tr.Outage.LateUntil.Sub(tr.FaultAt).Seconds()
	}
	tr.AfterEndOutage = longestOutage(puts, faultEnd, lateAfter)
	tr.P99Before = cmp.JSONFloat(p99(puts, tr.FaultAt.Add(-d.o.Before), tr.FaultAt, false))
	during := faultEnd
	if tr.Outage.End.After(during) {
		during = tr.Outage.End
	}
	tr.P99During = cmp.JSONFloat(p99(puts, tr.FaultAt, during, true))
	for _, p := range puts {
		if p.Due.After(faultEnd) && p.late(lateAfter) {
			tr.LateAfterEnd++
		}
		tr.Timeline = append(tr.Timeline, probePut{Due: round3(p.Due.Sub(tr.FaultAt).Seconds()), Took: round3(p.Done.Sub(p.Due).Seconds()), Err: p.Err})
	}
	slices.SortFunc(tr.Timeline, func(a, b probePut) int {
		switch {
		case a.Due < b.Due:
			return -1
		case a.Due > b.Due:
			return 1
		}
		return 0
	})
	tr.Wall = time.Since(began).Seconds()
	return tr, nil
}

// p99 is the 99th percentile latency from the due time of the puts due
// in [from, to) that succeeded (and, with failed, of those that failed,
// at the time their client waited), in seconds (NaN: none).
func p99(puts []put, from, to time.Time, failed bool) float64 {
	var xs []float64
	for _, p := range puts {
		if (p.Err == "" || failed) && !p.Due.Before(from) && p.Due.Before(to) {
			xs = append(xs, p.Done.Sub(p.Due).Seconds())
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	return xs[int(math.Ceil(0.99*float64(len(xs))))-1]
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
