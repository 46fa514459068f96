package drill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/verdict"
)

// The faults, by name.
const (
	KillLeader      = "kill-leader"
	StopLeader      = "stop-leader"
	PartitionLeader = "partition-leader"
	DefragLeader    = "defrag-leader"
	MoveLeader      = "move-leader"
)

// Faults are the faults a drill injects, in the order it runs them.
var Faults = []string{KillLeader, StopLeader, PartitionLeader, DefragLeader, MoveLeader}

// ErrUnknownFault is the error of a fault not in Faults.
var ErrUnknownFault = errors.New("unknown fault")

// SlowPut is check perf's slowest-request limit: a put that took longer
// counts as late.
const SlowPut = 500 * time.Millisecond

// Config is one fault's drill.
type Config struct {
	// Fault is one of Faults.
	Fault string
	// Load is the steady put load (endpoints set by Run; Duration is
	// Before + FaultFor + its RequestTimeout + After: a put the fault
	// caught may wait its whole timeout, and the After window begins
	// once the puts are in time again).
	Load etcdload.Load
	// Before is the load before the fault, After the load after it ended
	// (the member thawed, healed or restarted).
	Before, After time.Duration
	// FaultFor is how long a frozen or cut-off leader stays so.
	FaultFor time.Duration
	// DBSize is what the cluster's db is filled to before the load of a
	// defrag-leader drill (Fill).
	DBSize int64
}

// Outcome is what one fault cost, as clients saw it.
type Outcome struct {
	Fault string
	// Leader is the member that led when the fault struck; NewLeader the
	// one that led after it (Leader again when it kept its place).
	Leader, NewLeader string
	// At is when the fault struck; NewLeaderAfter the time from then to
	// another member leading (0: none did).
	At             time.Time
	NewLeaderAfter time.Duration
	// Outage is the write outage in the puts.
	Outage Outage
	// Terms is how far the cluster's raft term advanced: the elections
	// the fault cost (each election, won or not, takes a term).
	Terms uint64
	// P99Before, P99During and P99After are the put p99s from the due
	// time in the Before window, from the fault to the outage's end (or
	// the fault's end), and in the After window.
	P99Before, P99During, P99After time.Duration
	// Restart is how long the killed member took to serve clients again
	// on its data (kill-leader).
	Restart time.Duration
	// Defrag is how long the leader's defragmentation took, and DBSize
	// its db's size before it (defrag-leader).
	Defrag time.Duration
	DBSize int64
	// Requests are the puts, for a timeline.
	Requests []Request
}

// Run holds c under cfg.Load and injects cfg.Fault into it once the
// Before window is over.
func Run(ctx context.Context, c *etcdcluster.Cluster, cfg Config) (*Outcome, error) {
	if !slices.Contains(Faults, cfg.Fault) {
		return nil, fmt.Errorf("%w %q: want one of %s", ErrUnknownFault, cfg.Fault, strings.Join(Faults, ", "))
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	if cfg.Fault == DefragLeader {
		if err := Fill(ctx, cli, cfg.DBSize); err != nil {
			return nil, err
		}
	}
	termBefore := term(ctx, cli, c.Endpoints())
	var mu sync.Mutex
	var reqs []Request
	l := cfg.Load
	l.Client.Endpoints = c.Endpoints()
	l.Duration = cfg.Before + cfg.FaultFor + l.RequestTimeout + cfg.After
	l.OnRequest = func(due, done time.Time, err error) {
		mu.Lock()
		reqs = append(reqs, Request{Due: due, Done: done, Failed: err != nil})
		mu.Unlock()
	}
	loadDone := make(chan error, 1)
	go func() { _, err := etcdload.Run(ctx, l); loadDone <- err }()
	wait := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case err := <-loadDone:
			return fmt.Errorf("the load ended before the drill did: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := wait(cfg.Before); err != nil {
		return nil, err
	}
	lead, err := c.SteadyLeader(ctx)
	if err != nil {
		return nil, err
	}
	o := &Outcome{Fault: cfg.Fault, Leader: c.Name(lead)}
	newLeader := func() error {
		next, err := c.WaitLeader(ctx, lead)
		if err != nil {
			return err
		}
		o.NewLeader, o.NewLeaderAfter = c.Name(next), time.Since(o.At)
		return nil
	}
	switch cfg.Fault {
	case KillLeader:
		o.At = time.Now()
		if err := c.Kill(ctx, lead); err != nil {
			return nil, err
		}
		if err := newLeader(); err != nil {
			return nil, err
		}
		if o.Restart, err = c.Restart(ctx, lead); err != nil {
			return nil, err
		}
	case StopLeader, PartitionLeader:
		cut, heal := c.Freeze, c.Thaw
		if cfg.Fault == PartitionLeader {
			cut = func(i int) error { return c.Partition(i, true) }
			heal = func(i int) error { return c.Partition(i, false) }
		}
		o.At = time.Now()
		if err := cut(lead); err != nil {
			return nil, err
		}
		werr := func() error {
			wctx, cancel := context.WithTimeout(ctx, cfg.FaultFor)
			defer cancel()
			next, err := c.WaitLeader(wctx, lead)
			if err == nil {
				o.NewLeader, o.NewLeaderAfter = c.Name(next), time.Since(o.At)
			}
			return err
		}()
		if rest := cfg.FaultFor - time.Since(o.At); rest > 0 {
			if err := wait(rest); err != nil {
				heal(lead)
				return nil, err
			}
		}
		if err := heal(lead); err != nil {
			return nil, err
		}
		if werr != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	case DefragLeader:
		ep := c.Endpoints()[lead]
		if st, err := cli.Status(ctx, ep); err == nil {
			o.DBSize = st.DbSize
		}
		o.At = time.Now()
		if _, err := cli.Defragment(ctx, ep); err != nil {
			return nil, fmt.Errorf("defragmenting the leader %s: %w", c.Name(lead), err)
		}
		o.Defrag = time.Since(o.At)
		if st, err := cli.Status(ctx, ep); err == nil && st.Leader != st.Header.MemberId {
			if next, err := c.WaitLeader(ctx, lead); err == nil {
				o.NewLeader, o.NewLeaderAfter = c.Name(next), time.Since(o.At)
			}
		}
		if o.NewLeader == "" {
			o.NewLeader = o.Leader // it kept its place
		}
	case MoveLeader:
		to, id, err := follower(ctx, cli, c, lead)
		if err != nil {
			return nil, err
		}
		lc, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()[lead : lead+1], DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return nil, err
		}
		defer lc.Close()
		o.At = time.Now()
		if _, err := lc.MoveLeader(ctx, id); err != nil {
			return nil, fmt.Errorf("moving the leader to %s: %w", c.Name(to), err)
		}
		if err := newLeader(); err != nil {
			return nil, err
		}
	}
	faultEnd := time.Now()
	if err := <-loadDone; err != nil {
		return nil, fmt.Errorf("the drill's load: %w", err)
	}
	o.Terms = term(ctx, cli, c.Endpoints()) - termBefore
	mu.Lock()
	o.Requests = reqs
	mu.Unlock()
	o.Outage = FindOutage(o.Requests, o.At, SlowPut)
	end := faultEnd
	if o.Outage.End.After(end) {
		end = o.Outage.End
	}
	o.P99Before, _ = P99(o.Requests, o.At.Add(-cfg.Before), o.At)
	o.P99During, _ = P99(o.Requests, o.At, end)
	o.P99After, _ = P99(o.Requests, end, end.Add(cfg.After))
	return o, nil
}

// term is the highest raft term any member reports (0: none answered).
func term(ctx context.Context, cli *clientv3.Client, eps []string) uint64 {
	var t uint64
	for _, ep := range eps {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := cli.Status(sctx, ep)
		cancel()
		if err == nil {
			t = max(t, st.RaftTerm)
		}
	}
	return t
}

// follower is a member other than lead, by index and raft ID.
func follower(ctx context.Context, cli *clientv3.Client, c *etcdcluster.Cluster, lead int) (int, uint64, error) {
	ml, err := cli.MemberList(ctx)
	if err != nil {
		return 0, 0, err
	}
	to := (lead + 1) % len(c.Endpoints())
	for _, m := range ml.Members {
		if m.Name == c.Name(to) {
			return to, m.ID, nil
		}
	}
	return 0, 0, fmt.Errorf("no member named %s in the member list", c.Name(to))
}

// Judge judges what the fault cost against what Kubernetes builds on
// etcd's writes and raft's expectation of a new leader, for a cluster
// with this election timeout and largest round trip between members.
func (o *Outcome) Judge(election, rtt time.Duration) []verdict.Verdict {
	return verdict.JudgeDrill(verdict.DrillDefaults(), verdict.DrillFigures{
		Outage: o.Outage.Length(), P99During: o.P99During, NewLeader: o.NewLeaderAfter, Election: election, RTT: rtt,
	})
}
