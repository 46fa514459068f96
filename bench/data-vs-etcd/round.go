package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/diagnose/data/cost"
)

// observation is one member's round: the sizes read from its stopped
// data dir, what was predicted from them, and what etcd took.
type observation struct {
	Round     int            `json:"round"`
	Etcd      string         `json:"etcd"`
	Target    string         `json:"target_size"`
	Sizes     cost.Sizes     `json:"sizes"`
	Predicted cost.Predicted `json:"predicted"`
	// PredictWall is the prediction's own time (its probes).
	PredictWall float64 `json:"predict_wall_s"`
	Restart     float64 `json:"restart_s"` // process start to /health true, cold page cache
	Defrag      float64 `json:"defrag_s"`  // etcdctl defrag
	Snapshot    float64 `json:"snapshot_s"`
	Load        float64 `json:"load_average"`
}

// measure predicts m's costs from its stopped data dir, then restarts it
// with the page cache dropped, defragments it, saves a snapshot of it
// into dir and stops it again.
func measure(ctx context.Context, m *member, dir, etcdctl string, stderr io.Writer) (observation, error) {
	ob := observation{Etcd: m.kind.Name, Target: filepath.Base(m.dataDir)}
	ob.Load, _ = cmp.LoadAverage()
	s, err := sizesOf(m.dataDir, m.keys)
	if err != nil {
		return ob, err
	}
	ob.Sizes = s
	t0 := time.Now()
	if ob.Predicted, err = cost.Predict(ctx, dir, s); err != nil {
		return ob, err
	}
	ob.PredictWall = time.Since(t0).Seconds()
	if err := dropCaches(); err != nil {
		return ob, err
	}
	restart, err := m.start(ctx)
	if err != nil {
		return ob, err
	}
	ob.Restart = restart.Seconds()
	defrag, err := cmp.RunChild(ctx, nil, etcdctl, "--endpoints", m.client, "--command-timeout", "10m", "defrag")
	if err != nil {
		return ob, fmt.Errorf("%w; %v", err, m.stop())
	}
	ob.Defrag = defrag.Wall.Seconds()
	snap := filepath.Join(dir, "snapshot.db")
	saved, err := cmp.RunChild(ctx, nil, etcdctl, "--endpoints", m.client, "--command-timeout", "10m", "snapshot", "save", snap)
	os.Remove(snap)
	if err != nil {
		return ob, fmt.Errorf("%w; %v", err, m.stop())
	}
	ob.Snapshot = saved.Wall.Seconds()
	fmt.Fprintf(stderr, "%s %s: restart %.2f s (predicted %.2f), defrag %.2f s (%.2f), snapshot %.2f s (%.2f)\n", ob.Etcd, ob.Target,
		ob.Restart, ob.Predicted.Restart.Seconds, ob.Defrag, ob.Predicted.Defrag.Seconds, ob.Snapshot, ob.Predicted.SnapshotSend.Seconds)
	return ob, m.stop()
}

// dropCaches writes the dirty pages out and empties the page cache, as
// after a reboot (root only).
func dropCaches() error {
	if _, err := cmp.RunChild(context.Background(), nil, "sync"); err != nil {
		return err
	}
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200); err != nil {
		return fmt.Errorf("dropping the page cache (the bench runs as root): %w", err)
	}
	return nil
}
