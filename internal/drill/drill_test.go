package drill

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/fusedelay"
	"etcdbench/internal/verdict"
)

func TestMain(m *testing.M) {
	// The members are this test binary, re-executed.
	if code, ok := etcdcluster.MaybeRunMember(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// Each fault on three real members under check perf's small load: a new
// leader, a write outage that clients saw and that ended, and the puts
// around it.
func TestDrillFaults(t *testing.T) {
	const election = 500 * time.Millisecond
	for _, fault := range Faults {
		t.Run(fault, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			opts := etcdcluster.Options{Dir: t.TempDir(), Members: 3, Links: true, HeartbeatInterval: 50 * time.Millisecond, ElectionTimeout: election}
			if fault == AddMember {
				opts = Setting{Config: Config{DBSize: 20 << 20}}.snapshotted(opts)
			}
			l := etcdload.CheckPresetAt(150).Load()
			l.Target, l.RequestTimeout = etcdload.TargetBalanced, 3*time.Second
			l.Clients = InFlight(l.Clients, l.Rate, l.RequestTimeout)
			cfg := Config{Fault: fault, Load: l, Before: time.Second, FaultFor: 1500 * time.Millisecond, After: time.Second, DBSize: 20 << 20, SyncDelay: 200 * time.Millisecond}
			var o *Outcome
			var err error
			if fault == SlowFollower {
				if err := fusedelay.Usable(); err != nil {
					t.Skip(err)
				}
				o, err = Setting{Config: cfg}.onSlowDisks(ctx, filepath.Join(opts.Dir, "slow"), opts, cfg)
			} else {
				c, err := etcdcluster.Start(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				o, err = Run(ctx, c, cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s -> %s after %v; outage %v, late until %v (%d failed, %d slow), %d terms; p99 %v / %v / %v; restart %v; %d puts",
				fault, o.Leader, o.NewLeader, o.NewLeaderAfter, o.Outage.Length(), o.Outage.LateUntil.Sub(o.At), o.Outage.Failed, o.Outage.Slow, o.Terms, o.P99Before, o.P99During, o.P99After, o.Restart, len(o.Requests))
			if fault == SlowFollower {
				// The leader commits with the other follower; the slow
				// one's clients wait for its syncs.
				if o.NewLeader != o.Leader || o.Member == o.Leader || o.P99During < cfg.SyncDelay {
					t.Errorf("leader %s before, %s after; %s slowed; p99 during %v: want the leader kept, a follower slowed, its clients' puts %v late or more", o.Leader, o.NewLeader, o.Member, o.P99During, cfg.SyncDelay)
				}
				return
			}
			if fault == AddMember {
				if o.NewLeader != o.Leader || o.CatchUp <= 0 || o.Member != "member3" || o.DBSize < 20<<20 {
					t.Errorf("leader %s before, %s after; %s added, up to date after %v on a %d-byte db: want the leader kept, member3 caught up on 20 MiB or more", o.Leader, o.NewLeader, o.Member, o.CatchUp, o.DBSize)
				}
				return
			}
			if fault == DefragLeader || fault == DefragMember {
				// A defragmentation blocks the leader's applies, not its
				// heartbeats: it keeps its place.
				if o.NewLeader != o.Leader || o.Defrag <= 0 || o.DBSize < 20<<20 || (fault == DefragMember) == (o.Member == o.Leader) {
					t.Errorf("leader %s before, %s after; defragmentation of %s, %v of %d bytes: want the leader kept, a db of 20 MiB or more defragmented at the member the fault names", o.Leader, o.NewLeader, o.Member, o.Defrag, o.DBSize)
				}
				return
			}
			if o.NewLeader == "" || o.NewLeader == o.Leader {
				t.Errorf("leader %s before, %q after: want another", o.Leader, o.NewLeader)
			}
			// The load runs before the fault, through it, and a request
			// timeout and the After window past its end.
			if n := len(o.Requests); n < 150*5 {
				t.Errorf("%d puts in 5 s or more at 150/s", n)
			}
			if o.Outage.Open {
				t.Errorf("the outage had not ended when the load did")
			}
			if o.Terms < 1 {
				t.Errorf("the raft term advanced by %d: want at least one election", o.Terms)
			}
			switch fault {
			case MoveLeader:
				if o.NewLeaderAfter > election || o.Outage.Length() > time.Second {
					t.Errorf("a moved leader: new leader after %v, outage %v: want a hand-over under the election timeout", o.NewLeaderAfter, o.Outage.Length())
				}
			default:
				// A put a follower forwarded to the lost leader waits for
				// its timeout: the outage may last as long.
				if o.NewLeaderAfter < election*4/5 || o.Outage.Length() < election/2 || o.Outage.Length() > l.RequestTimeout+2*time.Second {
					t.Errorf("new leader after %v, outage %v: want about the %v election timeout or more, and at most the %v request timeout and a little", o.NewLeaderAfter, o.Outage.Length(), election, l.RequestTimeout)
				}
			}
			for _, v := range o.Judge(election, 0) {
				// Faults of 1.5 s keep every lease; a leader moved by
				// hand is not an election.
				if v.Check != "put_p99_during_fault" && v.Status != verdict.Pass {
					t.Errorf("%s: %v, %s", v.Check, v.Status, v.Detail)
				}
			}
			if fault == KillLeader && o.Restart <= 0 {
				t.Errorf("the killed member's restart took %v", o.Restart)
			}
		})
	}
}

func TestRunUnknownFault(t *testing.T) {
	if _, err := Run(context.Background(), nil, Config{Fault: "kill-everything"}); !errors.Is(err, ErrUnknownFault) {
		t.Errorf("Run: %v, want ErrUnknownFault", err)
	}
}
