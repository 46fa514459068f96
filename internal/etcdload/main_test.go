package etcdload

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// shared is one single-member embedded etcd that the load tests share,
// started on first use and stopped after the last test.
var shared struct {
	once sync.Once
	c    *Cluster
	err  error
	dir  string
}

func TestMain(m *testing.M) {
	// The members of 3-member clusters are this test binary, re-executed.
	if code, ok := MaybeRunMember(); ok {
		os.Exit(code)
	}
	if dir, ok := os.LookupEnv(orphanHelperEnv); ok {
		os.Exit(runOrphanHelper(dir))
	}
	code := m.Run()
	if shared.c != nil {
		shared.c.Close()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// sharedCluster returns the shared embedded etcd.
func sharedCluster(t *testing.T) *Cluster {
	t.Helper()
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "etcdload-test-")
		if shared.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shared.c, shared.err = StartEmbedded(ctx, Options{Dir: shared.dir})
	})
	if shared.err != nil {
		t.Fatalf("starting the shared embedded etcd: %v", shared.err)
	}
	return shared.c
}

// countPrefix counts the keys under prefix.
func countPrefix(t *testing.T, endpoints []string, prefix string) int64 {
	t.Helper()
	cli := newClient(t, endpoints)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, prefix, withCount()...)
	if err != nil {
		t.Fatalf("counting keys under %s: %v", prefix, err)
	}
	return resp.Count
}

// uniqueID is a run id no other test uses.
func uniqueID(t *testing.T) string {
	return fmt.Sprintf("test-%s-%d", t.Name(), time.Now().UnixNano())
}
