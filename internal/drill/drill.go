package drill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/internal/diagnose/data/cost"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/verdict"
)

// ErrUnknownFault is the error of a fault not in Faults.
var ErrUnknownFault = errors.New("unknown fault")

// SlowPut is check perf's slowest-request limit: a put that took longer
// counts as late.
const SlowPut = 500 * time.Millisecond

// Config is one fault's drill.
type Config struct {
	// Fault is one of Faults.
	Fault string
	// Load is the steady put load (its endpoints and duration set by
	// Run: it runs until a request timeout and the After window have
	// passed since the fault ended).
	Load etcdload.Load
	// Before is the load before the fault, After the load after it ended
	// (the member thawed, healed or restarted).
	Before, After time.Duration
	// FaultFor is how long a frozen or cut-off leader stays so.
	FaultFor time.Duration
	// DBSize is what the drill's own cluster's db is filled to before
	// the load of a fault that needs it (defragmentations, add-member;
	// Fill).
	DBSize int64
	// Member names the member defrag-member defragments and move-leader
	// hands the leadership to; empty: the first follower.
	Member string
	// MoveBack gives the leadership back after move-leader, where the
	// drill found it (on a cluster of the user's).
	MoveBack bool
	// Sizes reads the killed member's data dir before its restart, for
	// the prediction of that restart (kill-leader).
	Sizes bool
	// SlowDisk makes member i's disk slow (on) or fast again
	// (slow-follower-disk): its syncs wait SyncDelay.
	SlowDisk  func(i int, on bool)
	SyncDelay time.Duration
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
	// Outage is the write outage in the puts; AfterEnd the longest one
	// among the puts due after the fault ended (a cut-off member without
	// pre-vote deposing the leader when it comes back).
	Outage   Outage
	AfterEnd time.Duration
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
	// Member is the member defragmented, added, or the leadership moved
	// to.
	Member string
	// CatchUp is the time from a member's addition to its promotion: the
	// leader brought it up to date (add-member).
	CatchUp time.Duration
	// Sizes are the killed member's data as its restart found it
	// (Config.Sizes), for diagnose data's prediction of the restart.
	Sizes *cost.Sizes
	// RestartPredicted is diagnose data's prediction of the restart from
	// Sizes, on the disk under the drill's directory.
	RestartPredicted cost.Prediction
	// Requests are the puts, for a timeline.
	Requests []Request
}

// Target is the cluster a drill runs on: its members' client endpoints
// and names, and who leads. The embedded cluster (*etcdcluster.Cluster)
// takes every fault; a cluster of the user's (Dial) only those that
// break nothing (External).
type Target interface {
	Endpoints() []string
	Name(i int) string
	// SteadyLeader waits until every member names one leader in one term.
	SteadyLeader(ctx context.Context) (int, error)
	// WaitLeader waits until a member other than except leads.
	WaitLeader(ctx context.Context, except int) (int, error)
}

// ErrEmbeddedOnly is the error of a fault that breaks a member, asked of
// a cluster that is not the drill's own.
var ErrEmbeddedOnly = errors.New("drill: this fault breaks a member: only on the drill's own cluster")

// Run holds c under cfg.Load and injects cfg.Fault into it once the
// Before window is over; the load goes on until a request timeout and
// the After window have passed since the fault ended.
func Run(ctx context.Context, c Target, cfg Config) (*Outcome, error) {
	f := faultNamed(cfg.Fault)
	if f == nil {
		return nil, fmt.Errorf("%w %q: want one of %s", ErrUnknownFault, cfg.Fault, strings.Join(Faults, ", "))
	}
	emb, _ := c.(*etcdcluster.Cluster)
	if emb == nil && !f.remote {
		return nil, fmt.Errorf("%w: %s", ErrEmbeddedOnly, cfg.Fault)
	}
	cc := cfg.Load.Client
	cc.Endpoints, cc.DialTimeout, cc.Logger = c.Endpoints(), 5*time.Second, zap.NewNop()
	cli, err := clientv3.New(cc)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	if f.filled && emb != nil {
		if err := Fill(ctx, cli, cfg.DBSize); err != nil {
			return nil, err
		}
	}
	termBefore := term(ctx, cli, c.Endpoints())
	var mu sync.Mutex
	var reqs []Request
	var stopped atomic.Bool
	l := cfg.Load
	l.Client.Endpoints = c.Endpoints()
	l.Duration = maxLoad // the drill ends it (stopLoad)
	l.OnRequest = func(due, done time.Time, err error) {
		if err != nil && stopped.Load() {
			return // ended by the drill's own stop
		}
		mu.Lock()
		reqs = append(reqs, Request{Due: due, Done: done, Failed: err != nil})
		mu.Unlock()
	}
	lctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	loadDone := make(chan error, 1)
	go func() { _, err := etcdload.Run(lctx, l); loadDone <- err }()
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
	d := &drill{c: c, emb: emb, cli: cli, cc: cc, cfg: cfg, o: o, lead: lead, wait: wait}
	if err := f.inject(d, ctx); err != nil {
		return nil, err
	}
	faultEnd := time.Now()
	if err := wait(l.RequestTimeout + cfg.After); err != nil {
		return nil, err
	}
	stopped.Store(true)
	stopLoad()
	if err := <-loadDone; err != nil && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("the drill's load: %w", err)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if cfg.Fault == MoveLeader && cfg.MoveBack {
		if err := moveBack(ctx, cc, c, lead); err != nil {
			return nil, err
		}
	}
	o.Terms = term(ctx, cli, c.Endpoints()) - termBefore
	mu.Lock()
	o.Requests = reqs
	mu.Unlock()
	o.Outage = FindOutage(o.Requests, o.At, SlowPut)
	o.AfterEnd = LongestOutage(o.Requests, faultEnd, SlowPut)
	end := faultEnd
	if o.Outage.End.After(end) {
		end = o.Outage.End
	}
	o.P99Before, _ = P99(o.Requests, o.At.Add(-cfg.Before), o.At)
	o.P99During, _ = P99(o.Requests, o.At, end)
	o.P99After, _ = P99(o.Requests, end, end.Add(cfg.After))
	return o, nil
}

// maxLoad bounds a drill's load, which the drill ends itself: no fault
// takes this long.
const maxLoad = time.Hour

// member is the member named name (not the leader lead, unless
// leaderToo), or when name is empty the first follower.
func member(c Target, name string, lead int, leaderToo bool) (int, error) {
	for i := range c.Endpoints() {
		switch {
		case name == "" && i != lead:
			return i, nil
		case name != "" && c.Name(i) == name:
			if i == lead && !leaderToo {
				return -1, fmt.Errorf("drill: %s leads already: name a follower with --member", name)
			}
			return i, nil
		}
	}
	if name == "" {
		return -1, errors.New("drill: no follower to take the fault")
	}
	return -1, fmt.Errorf("drill: no member named %q answered", name)
}

// moveLeader hands the leadership from member from to member to, asked
// of from (etcd's MoveLeader is answered by the leader).
func moveLeader(ctx context.Context, cc clientv3.Config, c Target, from, to int) error {
	ids, err := memberIDs(ctx, cc, c)
	if err != nil {
		return err
	}
	cc.Endpoints = c.Endpoints()[from : from+1]
	lc, err := clientv3.New(cc)
	if err != nil {
		return err
	}
	defer lc.Close()
	if _, err := lc.MoveLeader(ctx, ids[to]); err != nil {
		return fmt.Errorf("moving the leader from %s to %s: %w", c.Name(from), c.Name(to), err)
	}
	return nil
}

// moveBack gives the leadership back to member lead, where the drill
// found it, once the members agree on who leads now.
func moveBack(ctx context.Context, cc clientv3.Config, c Target, lead int) error {
	now, err := c.SteadyLeader(ctx)
	if err != nil || now == lead {
		return err
	}
	if err := moveLeader(ctx, cc, c, now, lead); err != nil {
		return fmt.Errorf("giving the leadership back: %w", err)
	}
	_, err = c.SteadyLeader(ctx)
	return err
}

// memberIDs are the raft IDs of c's members, by endpoint.
func memberIDs(ctx context.Context, cc clientv3.Config, c Target) ([]uint64, error) {
	cli, err := clientv3.New(cc)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ids := make([]uint64, len(c.Endpoints()))
	for i, ep := range c.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := cli.Status(sctx, ep)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("asking %s for its ID: %w", ep, err)
		}
		ids[i] = st.Header.MemberId
	}
	return ids, nil
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

// Judge judges what the fault cost against what Kubernetes builds on
// etcd's writes and raft's expectation of a new leader, for a cluster
// with this election timeout and largest round trip between members.
func (o *Outcome) Judge(election, rtt time.Duration) []verdict.Verdict {
	return verdict.JudgeDrill(verdict.DrillDefaults(), verdict.DrillFigures{
		Outage: o.Outage.Length(), P99During: o.P99During, NewLeader: o.NewLeaderAfter, Election: election, RTT: rtt,
	})
}
