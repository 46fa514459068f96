package etcdcluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/testutil"
)

// TestAddLearner adds a learner to a single member, sees it in the
// membership as a learner that caught up (its db holds a key put before
// it joined), and removes it again: the membership and the directory are
// as before.
func TestAddLearner(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Dir: dir, Members: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cli := newClient(t, c.Endpoints())
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	l, err := c.AddLearner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := cli.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms.Members) != 2 || l.Leader != ms.Header.MemberId {
		t.Fatalf("members %v after AddLearner (leader %x), want the member and the learner", ms.Members, l.Leader)
	}
	for _, m := range ms.Members {
		if m.ID == l.ID && !m.IsLearner {
			t.Errorf("member %x is not a learner", l.ID)
		}
	}
	// The learner serves clients once it caught up.
	lcli := newClient(t, []string{l.Endpoint})
	testutil.WaitFor(t, 30*time.Second, "the learner to serve k", func() bool {
		r, err := lcli.Get(ctx, "k", clientv3.WithSerializable())
		return err == nil && len(r.Kvs) == 1
	})
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ms, err = cli.MemberList(ctx)
	if err != nil || len(ms.Members) != 1 {
		t.Errorf("members %v, %v after the learner's Close, want one", ms.Members, err)
	}
	if _, err := os.Stat(filepath.Join(dir, learnerName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the learner's directory is still there: %v", err)
	}
}
