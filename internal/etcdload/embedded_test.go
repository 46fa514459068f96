package etcdload

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// startCluster starts an embedded cluster in a temporary directory and
// stops it when the test ends.
func startCluster(t *testing.T, members int) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := StartEmbedded(ctx, Options{Dir: t.TempDir(), Members: members})
	if err != nil {
		t.Fatalf("StartEmbedded(%d members): %v", members, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// newClient connects to the cluster and closes the client when the test ends.
func newClient(t *testing.T, endpoints []string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("connecting to %v: %v", endpoints, err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestEmbeddedSingleMemberPutGet(t *testing.T) {
	c := startCluster(t, 1)
	if n := len(c.Endpoints()); n != 1 {
		t.Fatalf("%d endpoints, want 1", n)
	}
	cli := newClient(t, c.Endpoints())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatalf("put: %v", err)
	}
	resp, err := cli.Get(ctx, "k")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("get k = %v, want v", resp.Kvs)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestEmbeddedThreeMembersElectLeader(t *testing.T) {
	c := startCluster(t, 3)
	eps := c.Endpoints()
	if len(eps) != 3 || len(c.MetricsURLs()) != 3 {
		t.Fatalf("endpoints %v, metrics %v: want 3 of each", eps, c.MetricsURLs())
	}
	cli := newClient(t, eps)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	leaders := map[uint64]bool{}
	for _, ep := range eps {
		st, err := cli.Status(ctx, ep)
		if err != nil {
			t.Fatalf("status of %s: %v", ep, err)
		}
		if st.Leader == 0 {
			t.Errorf("%s knows no leader", ep)
		}
		leaders[st.Leader] = true
	}
	if len(leaders) != 1 {
		t.Errorf("members disagree on the leader: %v", leaders)
	}
	// One process, one registry: one metrics target for all members.
	if ts := c.MetricsTargets(); len(ts) != 1 || ts[0].Name != "members" {
		t.Errorf("metrics targets %+v, want one named members", ts)
	}
}

func TestEmbeddedBadMembers(t *testing.T) {
	if _, err := StartEmbedded(context.Background(), Options{Dir: t.TempDir(), Members: 2}); err == nil {
		t.Fatal("2 members accepted, want an error")
	}
}
