package drill

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/diagnose/data"
	"etcdbench/internal/etcdcluster"
)

// The faults, by name.
const (
	KillLeader      = "kill-leader"
	StopLeader      = "stop-leader"
	PartitionLeader = "partition-leader"
	SlowFollower    = "slow-follower-disk"
	DefragLeader    = "defrag-leader"
	DefragMember    = "defrag-member"
	AddMember       = "add-member"
	MoveLeader      = "move-leader"
)

// fault is one fault a drill injects: its name, what it does in words,
// whether it may run on a cluster of the user's (it breaks no member),
// whether the db is filled to Config.DBSize first (what a
// defragmentation copies, what a new member receives), and how it is
// injected once the Before window is over: inject sets the Outcome's
// At, and what it alone knows.
type fault struct {
	name, words    string
	remote, filled bool
	inject         func(d *drill, ctx context.Context) error
}

// faults are the faults, in the order a drill runs them.
var faults = []fault{
	{KillLeader, "the leader's process killed (SIGKILL), then restarted on its data", false, false, (*drill).killLeader},
	{StopLeader, "the leader's process frozen (SIGSTOP) for the fault's length, then thawed", false, false, (*drill).cutLeader},
	{PartitionLeader, "the leader cut off from its peers both ways for the fault's length (its clients still reach it), then healed", false, false, (*drill).cutLeader},
	{SlowFollower, "a follower's disk made slow (each of its syncs waits the sync delay) for the fault's length", false, false, (*drill).slowFollower},
	{DefragLeader, "the leader's db defragmented with etcd's Maintenance API (on the drill's own cluster, filled beforehand)", false, true, (*drill).defrag},
	{DefragMember, "a follower's db (or the member named) defragmented with etcd's Maintenance API", true, true, (*drill).defrag},
	{AddMember, "a fourth member added as a learner, brought up to date with the leader's whole db (the members' log compacted past it) and promoted", false, true, (*drill).addMember},
	{MoveLeader, "the leadership handed to a follower (or the member named) with etcd's MoveLeader", true, false, (*drill).moveLeader},
}

// faultNamed is the fault of that name, or nil.
func faultNamed(name string) *fault {
	for i := range faults {
		if faults[i].name == name {
			return &faults[i]
		}
	}
	return nil
}

// names are the names of the faults keep keeps.
func names(keep func(fault) bool) []string {
	var out []string
	for _, f := range faults {
		if keep(f) {
			out = append(out, f.name)
		}
	}
	return out
}

// Faults are the faults a drill injects, in the order it runs them.
var Faults = names(func(fault) bool { return true })

// External are the faults a drill injects into a cluster of the user's:
// a leader transfer (moved back afterwards) and a defragmentation of one
// member; the others would break a member.
var External = names(func(f fault) bool { return f.remote })

// drill is one fault under way: the cluster (emb when it is the drill's
// own), a client of it and its config, what the fault cost so far, the
// leader when it struck, and a wait that ends early when the load does.
type drill struct {
	c    Target
	emb  *etcdcluster.Cluster
	cli  *clientv3.Client
	cc   clientv3.Config
	cfg  Config
	o    *Outcome
	lead int
	wait func(time.Duration) error
}

// newLeader waits until another member leads and records it.
func (d *drill) newLeader(ctx context.Context) error {
	next, err := d.c.WaitLeader(ctx, d.lead)
	if err != nil {
		return err
	}
	d.o.NewLeader, d.o.NewLeaderAfter = d.c.Name(next), time.Since(d.o.At)
	return nil
}

// kept records who leads once the members agree: the leader kept its
// place, or another took it.
func (d *drill) kept(ctx context.Context) {
	if next, err := d.c.SteadyLeader(ctx); err == nil && next != d.lead {
		d.o.NewLeader, d.o.NewLeaderAfter = d.c.Name(next), time.Since(d.o.At)
		return
	}
	d.o.NewLeader = d.o.Leader
}

func (d *drill) killLeader(ctx context.Context) error {
	d.o.At = time.Now()
	if err := d.emb.Kill(ctx, d.lead); err != nil {
		return err
	}
	if err := d.newLeader(ctx); err != nil {
		return err
	}
	if d.cfg.Sizes {
		sz, err := data.DataDirSizes(ctx, d.emb.DataDir(d.lead))
		if err != nil {
			return fmt.Errorf("reading the killed member's data: %w", err)
		}
		d.o.Sizes = &sz
	}
	var err error
	d.o.Restart, err = d.emb.Restart(ctx, d.lead)
	return err
}

// cutLeader freezes the leader (stop-leader) or cuts it off from its
// peers (partition-leader) for FaultFor, then thaws or heals it.
func (d *drill) cutLeader(ctx context.Context) error {
	cut, heal := d.emb.Freeze, d.emb.Thaw
	if d.cfg.Fault == PartitionLeader {
		cut = func(i int) error { return d.emb.Partition(i, true) }
		heal = func(i int) error { return d.emb.Partition(i, false) }
	}
	d.o.At = time.Now()
	if err := cut(d.lead); err != nil {
		return err
	}
	werr := func() error {
		wctx, cancel := context.WithTimeout(ctx, d.cfg.FaultFor)
		defer cancel()
		return d.newLeader(wctx)
	}()
	if rest := d.cfg.FaultFor - time.Since(d.o.At); rest > 0 {
		if err := d.wait(rest); err != nil {
			return errors.Join(err, heal(d.lead))
		}
	}
	if err := heal(d.lead); err != nil {
		return err
	}
	if werr != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

func (d *drill) slowFollower(ctx context.Context) error {
	if d.cfg.SlowDisk == nil {
		return errors.New("drill: slow-follower-disk needs the members' data on a slow-syncing filesystem")
	}
	m, err := member(d.c, d.cfg.Member, d.lead, false)
	if err != nil {
		return err
	}
	d.o.Member = d.c.Name(m)
	d.o.At = time.Now()
	d.cfg.SlowDisk(m, true)
	err = d.wait(d.cfg.FaultFor)
	d.cfg.SlowDisk(m, false)
	if err != nil {
		return err
	}
	d.kept(ctx)
	return nil
}

// defrag defragments the leader (defrag-leader) or a follower, or the
// member named (defrag-member).
func (d *drill) defrag(ctx context.Context) error {
	m := d.lead
	if d.cfg.Fault == DefragMember {
		var err error
		if m, err = member(d.c, d.cfg.Member, d.lead, true); err != nil {
			return err
		}
	}
	d.o.Member = d.c.Name(m)
	ep := d.c.Endpoints()[m]
	if st, err := d.cli.Status(ctx, ep); err == nil {
		d.o.DBSize = st.DbSize
	}
	d.o.At = time.Now()
	if _, err := d.cli.Defragment(ctx, ep); err != nil {
		return fmt.Errorf("defragmenting %s: %w", d.o.Member, err)
	}
	d.o.Defrag = time.Since(d.o.At)
	d.kept(ctx)
	return nil
}

func (d *drill) addMember(ctx context.Context) error {
	a, err := d.emb.AddMember(ctx)
	if err != nil {
		return err
	}
	d.o.At, d.o.CatchUp, d.o.Member, d.o.NewLeader = a.At, a.CaughtUp, d.c.Name(a.Index), d.o.Leader
	if st, err := d.cli.Status(ctx, d.c.Endpoints()[d.lead]); err == nil {
		d.o.DBSize = st.DbSize
	}
	return nil
}

func (d *drill) moveLeader(ctx context.Context) error {
	to, err := member(d.c, d.cfg.Member, d.lead, false)
	if err != nil {
		return err
	}
	d.o.Member = d.c.Name(to)
	d.o.At = time.Now()
	if err := moveLeader(ctx, d.cc, d.c, d.lead, to); err != nil {
		return err
	}
	return d.newLeader(ctx)
}
