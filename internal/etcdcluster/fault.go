package etcdcluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// The faults a drill injects into member processes. None of these may
// run concurrently with another method that changes the members
// (Restart, Close).

// errNotProcs is the error of a fault asked of members that are not
// processes of their own.
var errNotProcs = errors.New("embedded etcd: faults are injected only into member processes (three members)")

// member is member i's process, or an error.
func (c *Cluster) member(i int) (*memberProc, error) {
	if len(c.procs) < 2 {
		return nil, errNotProcs
	}
	if i < 0 || i >= len(c.procs) {
		return nil, fmt.Errorf("embedded etcd: no member %d of %d", i, len(c.procs))
	}
	return c.procs[i], nil
}

// Name is member i's name (member0, member1, ...), as its log lines and
// --initial-cluster say it.
func (c *Cluster) Name(i int) string { return memberName(i) }

// PID is member i's process ID (0 for a member in this process).
func (c *Cluster) PID(i int) int {
	if i < 0 || i >= len(c.procs) || c.procs[i].cmd.Process == nil {
		return 0
	}
	return c.procs[i].cmd.Process.Pid
}

// DataDir is member i's --data-dir.
func (c *Cluster) DataDir(i int) string { return filepath.Join(c.opts.Dir, memberName(i)) }

// Kill kills member i's process (SIGKILL: a crash, not a stop, which
// would hand its leadership over first) and waits until it is reaped.
// The member stays down until Restart; Close does not count it a
// failure.
func (c *Cluster) Kill(ctx context.Context, i int) error {
	p, err := c.member(i)
	if err != nil {
		return err
	}
	p.killed.Store(true)
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	select {
	case <-p.exited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Restart starts member i again on its data, in a new process on the
// same ports (after Kill), and waits until it serves clients: took is
// from its start to then, the restart etcd needs on this data (its
// snapshot and WAL read back, the backend opened, its peers reached).
func (c *Cluster) Restart(ctx context.Context, i int) (took time.Duration, err error) {
	old, err := c.member(i)
	if err != nil {
		return 0, err
	}
	select {
	case <-old.exited:
	default:
		return 0, fmt.Errorf("embedded etcd: %s still runs: kill it before a restart", memberName(i))
	}
	t0 := time.Now()
	p, err := startMemberProc(c.forker, c.specs[i], c.log, c.changed)
	if err != nil {
		return 0, err
	}
	c.procs[i] = p
	timer := time.NewTimer(cmp.Or(c.opts.StartTimeout, DefaultStartTimeout))
	defer timer.Stop()
	for {
		select {
		case <-p.ready:
			return time.Since(t0), nil
		case <-p.exited:
			return 0, c.withLog(fmt.Errorf("embedded etcd: %s failed while restarting: %w", memberName(i), p.exitErr()))
		case <-c.changed:
		case <-timer.C:
			return 0, c.withLog(fmt.Errorf("%w: %s not ready %v after its restart", ErrNotReady, memberName(i), time.Since(t0).Round(time.Millisecond)))
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// Freeze stops member i's process (SIGSTOP: a member that hangs, as on a
// stalled disk or a paused VM, its connections open); Thaw continues it
// (SIGCONT).
func (c *Cluster) Freeze(i int) error { return c.signal(i, syscall.SIGSTOP) }

// Thaw continues member i after Freeze.
func (c *Cluster) Thaw(i int) error { return c.signal(i, syscall.SIGCONT) }

func (c *Cluster) signal(i int, sig syscall.Signal) error {
	p, err := c.member(i)
	if err != nil {
		return err
	}
	return p.cmd.Process.Signal(sig)
}

// Partition cuts member i off from the others (on) or heals the cut
// (off): its own link holds every connection the others opened to it,
// and theirs hold the connections it opened to them, both ways, while
// the others still reach each other. Nothing is dropped or reset: the
// bytes wait, as on a network that loses every packet until it heals,
// and etcd's own timeouts end what waits too long. Clients still reach
// the member. It needs links (Options.Links or members apart).
func (c *Cluster) Partition(i int, on bool) error {
	if _, err := c.member(i); err != nil {
		return err
	}
	if len(c.links) != len(c.procs) || len(c.ids) != len(c.procs) {
		return errors.New("embedded etcd: a partition needs links between the members (Options.Links)")
	}
	c.links[i].Hold(on)
	for j, l := range c.links {
		if j != i {
			l.HoldFrom(c.ids[i], on)
		}
	}
	return nil
}

// WaitLeader waits until a member other than except (-1: any member)
// reports that it leads, and returns it; each member reports within
// 20 ms of a change. A frozen or cut-off member's own claim is not
// counted when it is except.
func (c *Cluster) WaitLeader(ctx context.Context, except int) (int, error) {
	if len(c.procs) < 2 {
		return c.Leader(ctx)
	}
	tick := time.NewTicker(leaderPollInterval)
	defer tick.Stop()
	for {
		for i, p := range c.procs {
			if i != except && p.leader.Load() {
				return i, nil
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return -1, ctx.Err()
		}
	}
}

// SteadyLeader waits until the members agree: every one says the same
// member leads, in the same raft term, and that member reports that it
// leads - no election under way, so that a fault struck now is the
// cause of the next one. It returns that member, or ctx's error.
func (c *Cluster) SteadyLeader(ctx context.Context) (int, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return -1, err
	}
	defer cli.Close()
	tick := time.NewTicker(leaderPollInterval)
	defer tick.Stop()
	for {
		if lead, ok := c.agreed(ctx, cli); ok {
			return lead, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return -1, fmt.Errorf("embedded etcd: the members do not agree on a leader: %w", ctx.Err())
		}
	}
}

// agreed is the member every member says leads, in one term, when they
// agree and it says so too.
func (c *Cluster) agreed(ctx context.Context, cli *clientv3.Client) (int, bool) {
	actx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var leader, term uint64
	for i, ep := range c.endpoints {
		st, err := cli.Status(actx, ep)
		if err != nil || st.Leader == 0 || (i > 0 && (st.Leader != leader || st.RaftTerm != term)) {
			return -1, false
		}
		leader, term = st.Leader, st.RaftTerm
	}
	ml, err := cli.MemberList(actx)
	if err != nil {
		return -1, false
	}
	for _, m := range ml.Members {
		if m.ID != leader {
			continue
		}
		for i := range c.endpoints {
			if m.Name == memberName(i) && (i >= len(c.procs) || c.procs[i].leader.Load()) {
				return i, true
			}
		}
	}
	return -1, false
}
