package etcdload

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/etcdcluster"
)

// shared is one single-member embedded etcd that the load tests share,
// started on first use and stopped after the last test.
var shared struct {
	once sync.Once
	c    *etcdcluster.Cluster
	err  error
	dir  string
}

func TestMain(m *testing.M) {
	// The members of 3-member clusters are this test binary, re-executed.
	if code, ok := etcdcluster.MaybeRunMember(); ok {
		os.Exit(code)
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
func sharedCluster(t *testing.T) *etcdcluster.Cluster {
	t.Helper()
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "etcdload-test-")
		if shared.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shared.c, shared.err = etcdcluster.Start(ctx, etcdcluster.Options{Dir: shared.dir})
	})
	if shared.err != nil {
		t.Fatalf("starting the shared embedded etcd: %v", shared.err)
	}
	return shared.c
}

// startCluster starts an embedded cluster in a temporary directory and
// stops it when the test ends.
func startCluster(t *testing.T, members int) *etcdcluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: t.TempDir(), Members: members})
	if err != nil {
		t.Fatalf("Start(%d members): %v", members, err)
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
