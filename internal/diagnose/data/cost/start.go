package cost

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/internal/etcdcluster"
)

// memberProbe is what a real single member on the disk gave: its start
// to ready on an empty data dir, and a snapshot of its db streamed to a
// file beside it and fsynced (etcd's Maintenance.Snapshot: bbolt's
// WriteTo, SHA-256 and gRPC on the server, the client's writes).
type memberProbe struct {
	start         time.Duration // median over the starts
	starts        int
	snapBytes     int64
	snapshot      time.Duration
	snapshotRatio float64 // B/s
}

// payloadPut is the size of one put filling the probe member: under
// etcd's default request limit (1.5 MiB).
const payloadPut = 1 << 20

// probeMember starts an empty single member in dir starts times (the
// election after a start waits a random 1 to 10 ticks, so one start is
// noisy) and, on the last one, puts snapBytes of values and times a
// snapshot of its db into dir.
func probeMember(ctx context.Context, dir string, starts int, snapBytes int64, timeout time.Duration) (memberProbe, error) {
	p := memberProbe{starts: starts}
	var took []time.Duration
	for i := range starts {
		sub := filepath.Join(dir, fmt.Sprintf("start%d", i))
		t0 := time.Now()
		c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: sub, Members: 1, StartTimeout: timeout})
		if err != nil {
			return p, fmt.Errorf("cost: starting an empty member in %s: %w", sub, err)
		}
		took = append(took, time.Since(t0))
		if i == starts-1 {
			err = snapshotProbe(ctx, c.Endpoints(), filepath.Join(dir, "snapshot.db"), snapBytes, starts, &p)
		}
		if cerr := c.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("cost: stopping the probe member in %s: %w", sub, cerr)
		}
		if err != nil {
			return p, err
		}
		os.RemoveAll(sub)
	}
	slices.Sort(took)
	p.start = took[len(took)/2]
	return p, nil
}

// snapshotProbe puts size bytes into the member at endpoints and times
// its snapshot streamed into path until fsynced, as etcdctl snapshot save
// does, n times: the median counts.
func snapshotProbe(ctx context.Context, endpoints []string, path string, size int64, n int, p *memberProbe) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("cost: a client of the probe member: %w", err)
	}
	defer cli.Close()
	value := string(make([]byte, payloadPut))
	for i := int64(0); i*payloadPut < size; i++ {
		if _, err := cli.Put(ctx, fmt.Sprintf("/registry/probe/%06d", i), value); err != nil {
			return fmt.Errorf("cost: filling the probe member: %w", err)
		}
	}
	var took []time.Duration
	for range n {
		d, bytes, err := saveSnapshot(ctx, cli, path)
		if err != nil {
			return err
		}
		took, p.snapBytes = append(took, d), bytes
	}
	slices.Sort(took)
	p.snapshot = took[len(took)/2]
	p.snapshotRatio = float64(p.snapBytes) / max(p.snapshot.Seconds(), 1e-9)
	return nil
}

// saveSnapshot streams a snapshot from cli into path and fsyncs it.
func saveSnapshot(ctx context.Context, cli *clientv3.Client, path string) (time.Duration, int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(path)
	defer f.Close()
	start := time.Now()
	rc, err := cli.Snapshot(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("cost: a snapshot of the probe member: %w", err)
	}
	n, err := io.Copy(f, rc)
	rc.Close()
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return 0, 0, fmt.Errorf("cost: saving the probe member's snapshot to %s: %w", path, err)
	}
	return time.Since(start), n, nil
}
