package etcdcluster

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/testutil"
)

// One cluster through every fault: a frozen leader is replaced and
// rejoins as a follower once thawed; a cut-off leader is replaced while
// the others still reach each other, and rejoins once healed; a killed
// member restarts on its data and serves what was written while it was
// down.
func TestFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), Members: 3, Links: true, HeartbeatInterval: 50 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close after the faults: %v", err)
		}
	}()
	cli := newClient(t, c.Endpoints())
	// put writes k through member i (-1: any).
	put := func(i int, k string) {
		t.Helper()
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		to := cli
		if i >= 0 {
			to = newClient(t, c.Endpoints()[i:i+1])
		}
		if _, err := to.Put(pctx, k, "v"); err != nil {
			t.Fatalf("put %s: %v", k, err)
		}
	}
	// rejoined waits until member i follows the others' leader.
	rejoined := func(i int, after string) {
		t.Helper()
		testutil.WaitFor(t, 20*time.Second, c.Name(i)+" following again "+after, func() bool {
			lctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			lead, err := c.Leader(lctx)
			return err == nil && lead != i
		})
	}

	put(-1, "settled") // the first election is over
	for _, f := range []struct {
		name      string
		cut, heal func(i int) error
	}{
		{"freeze", c.Freeze, c.Thaw},
		{"partition", func(i int) error { return c.Partition(i, true) }, func(i int) error { return c.Partition(i, false) }},
	} {
		old, err := c.SteadyLeader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if err := f.cut(old); err != nil {
			t.Fatalf("%s %s: %v", f.name, c.Name(old), err)
		}
		lead, err := c.WaitLeader(ctx, old)
		if err != nil {
			t.Fatalf("%s of the leader: %v", f.name, err)
		}
		t.Logf("%s of leader %s: %s leads after %v", f.name, c.Name(old), c.Name(lead), time.Since(t0))
		if took := time.Since(t0); took < 400*time.Millisecond {
			t.Errorf("%s: a new leader %v after it: before the 500ms election timeout", f.name, took)
		}
		put(lead, "during-"+f.name)
		if err := f.heal(old); err != nil {
			t.Fatal(err)
		}
		rejoined(old, "after the "+f.name)
	}

	old, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(ctx, old); err != nil {
		t.Fatal(err)
	}
	lead, err := c.WaitLeader(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	put(lead, "while-down")
	took, err := c.Restart(ctx, old)
	if err != nil {
		t.Fatalf("restart of %s: %v", c.Name(old), err)
	}
	t.Logf("%s restarted in %v", c.Name(old), took)
	one := newClient(t, c.Endpoints()[old:old+1])
	testutil.WaitFor(t, 20*time.Second, c.Name(old)+" serving the put made while it was down", func() bool {
		gctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		r, err := one.Get(gctx, "while-down", clientv3.WithSerializable())
		return err == nil && len(r.Kvs) == 1
	})
	rejoined(old, "after its restart")
}
