package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/testutil"
)

// The conditions the tests that interrupt a run, or watch one, wait on
// (never a fixed sleep): a put of the load in an etcd's WAL or in a
// cluster, a file rewritten after its preparation, a sweep's next step.

// waitLoadInWAL waits until the etcd load of p has reached the embedded
// etcd it started under dir: a put's key (under etcdload.PrefixRoot) is
// in one of the WAL segments found under dir.
func waitLoadInWAL(t *testing.T, p *process, dir string) {
	t.Helper()
	key := []byte(etcdload.PrefixRoot)
	testutil.WaitFor(t, 60*time.Second, "a put of the load in the embedded etcd's WAL under "+dir, func() bool {
		if p.exited() {
			t.Fatalf("etcdbench exited before its load reached etcd: %+v", p.res)
		}
		found := false
		// Errors are directories that come and go as the run goes on.
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".wal") && fileHolds(path, key) {
				found = true
				return fs.SkipAll
			}
			return nil
		})
		return found
	})
}

// fileHolds reports whether the first 4 MiB of path (a WAL segment is
// 64 MiB, preallocated; the load's first puts are near its start) hold b.
func fileHolds(path string, b []byte) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 4<<20)
	n, _ := io.ReadFull(f, buf)
	return bytes.Contains(buf[:n], b)
}

// waitPuts waits until the cluster of endpoints has taken n writes (its
// revision has moved n past the first look, and a key of the load is
// under etcdload.PrefixRoot): the load is under way.
func waitPuts(t *testing.T, n int64, endpoints ...string) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	first := int64(-1)
	testutil.WaitFor(t, 30*time.Second, fmt.Sprintf("%d writes of the load to %s", n, strings.Join(endpoints, ",")), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		resp, err := cli.Get(ctx, etcdload.PrefixRoot, clientv3.WithPrefix(), clientv3.WithCountOnly())
		switch {
		case err != nil:
			return false
		case first < 0:
			first = resp.Header.Revision
		}
		return resp.Count > 0 && resp.Header.Revision-first >= n
	})
}

// waitRewritten waits until p's workload has prepared path (written it
// to size bytes) and then written to it again: the workload is past its
// preparation, in its timed part.
func waitRewritten(t *testing.T, p *process, path string, size int64) {
	t.Helper()
	var prepared time.Time
	testutil.WaitFor(t, 60*time.Second, path+" prepared and written again", func() bool {
		if p.exited() {
			t.Fatalf("etcdbench exited before the timed part on %s: %+v", path, p.res)
		}
		st, err := os.Stat(path)
		switch {
		case err != nil || st.Size() < size:
			return false
		case prepared.IsZero():
			prepared = st.ModTime() // of the preparation's last write
			return false
		}
		return st.ModTime().After(prepared)
	})
}

// nextStepWatch watches the cluster of endpoints for a sweep's steps;
// started before the sweep, its wait returns once the first step's keys
// are deleted and the next step has put one.
func nextStepWatch(t *testing.T, endpoints []string) (wait func()) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	wch := cli.Watch(ctx, etcdload.PrefixRoot, clientv3.WithPrefix())
	return func() {
		t.Helper()
		defer cli.Close()
		defer cancel()
		deleted := false
		for resp := range wch {
			for _, ev := range resp.Events {
				switch {
				case ev.Type == clientv3.EventTypeDelete:
					deleted = true
				case deleted:
					return
				}
			}
		}
		t.Fatalf("no put after the first step's keys were deleted, in 60 s: %v", ctx.Err())
	}
}
