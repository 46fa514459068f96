package etcdcluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A member added to three whose raft log was compacted past the start
// catches up from the leader's whole db, is promoted to a voter, serves
// what was written before it came, and is stopped with the others.
func TestAddMember(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), Members: 3, SnapshotCount: 100, SnapshotCatchUpEntries: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close with the added member: %v", err)
		}
	}()
	cli := newClient(t, c.Endpoints())
	for i := range 300 {
		if _, err := cli.Put(ctx, fmt.Sprintf("k%03d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	a, err := c.AddMember(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.Index != 3 || a.CaughtUp <= 0 || len(c.Endpoints()) != 4 {
		t.Fatalf("added member %d, up to date after %v, %d endpoints: want member 3 and 4 endpoints", a.Index, a.CaughtUp, len(c.Endpoints()))
	}
	ml, err := cli.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ml.Members {
		if m.IsLearner {
			t.Errorf("member %s is still a learner", m.Name)
		}
	}
	if len(ml.Members) != 4 {
		t.Errorf("%d members, want 4", len(ml.Members))
	}
	added := newClient(t, c.Endpoints()[3:])
	r, err := added.Get(ctx, "k299", clientv3.WithSerializable())
	if err != nil || len(r.Kvs) != 1 {
		t.Errorf("the added member's k299: %v, %v", r, err)
	}
	resp, err := http.Get(c.Endpoints()[3] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "etcd_network_snapshot_receive_success") {
		t.Errorf("the added member received no snapshot: it caught up by the log, not the db")
	}
}
