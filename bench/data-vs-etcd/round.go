package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/result"
)

// observation is one member's round: the sizes diagnose data read from
// its stopped data dir, what it predicted from them, and what etcd took.
type observation struct {
	Round  int    `json:"round"`
	Etcd   string `json:"etcd"`
	Target string `json:"target"`
	// DBBytes, InUseBytes, Revisions and WALEntries are diagnose data's.
	DBBytes    int64                 `json:"db_bytes"`
	InUseBytes int64                 `json:"in_use_bytes"`
	Revisions  int64                 `json:"revisions"`
	WALEntries int64                 `json:"wal_entries"`
	Predicted  *result.DataPredicted `json:"predicted"`
	// PredictWall is diagnose data's wall time, its probes included.
	PredictWall float64 `json:"predict_wall_s"`
	Restart     float64 `json:"restart_s"`  // process start to /health true, page cache dropped
	Defrag      float64 `json:"defrag_s"`   // etcdctl defrag
	Snapshot    float64 `json:"snapshot_s"` // etcdctl snapshot save
	// Send, Receive and SendWall are a snapshot sent to a new member
	// (see sent): the leader's metric, the new member's, and the new
	// member's start until the leader counted the send.
	Send         float64 `json:"snapshot_send_s"`
	Receive      float64 `json:"snapshot_receive_s"`
	ReceiveFsync float64 `json:"snapshot_receive_fsync_s"` // the new member's fsync of the db, in Receive
	SendWall     float64 `json:"snapshot_send_wall_s"`
	Load         float64 `json:"load_average"`
}

// analysis is diagnose data --predict=false on a stopped member's db:
// its wall time and its peak resident memory.
type analysis struct {
	Round   int     `json:"round"`
	Etcd    string  `json:"etcd"`
	Target  string  `json:"target"`
	DBBytes int64   `json:"db_bytes"`
	Wall    float64 `json:"wall_s"`
	// MaxRSS is the child's peak resident set (rusage), which counts the
	// db's pages it mapped and touched; MaxAnon the peak of its
	// anonymous memory (RssAnon, sampled every 20 ms): what it allocated.
	MaxRSS  int64 `json:"max_rss_bytes"`
	MaxAnon int64 `json:"max_anon_bytes"`
}

// diagnoseData runs etcdbench diagnose data on dataDir with args added
// and returns its result's data, its wall time, its peak RSS (the
// child's rusage) and its peak anonymous memory (sampled).
func diagnoseData(ctx context.Context, etcdbench, dataDir string, args ...string) (*result.Data, time.Duration, memory, error) {
	cmd := exec.CommandContext(ctx, etcdbench, append([]string{"diagnose", "data", "--data-dir", dataDir, "-o", "json"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	var mem memory
	err := cmd.Start()
	if err == nil {
		stop := sampleAnon(cmd.Process.Pid, &mem.anon)
		err = cmd.Wait()
		stop()
	}
	wall := time.Since(t0)
	rss := &mem.rss
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			*rss = ru.Maxrss * 1024 // kilobytes on Linux
		}
	}
	if err != nil {
		return nil, wall, mem, fmt.Errorf("etcdbench diagnose data --data-dir %s: %w%s", dataDir, err, cmp.Tail(errb.Bytes()))
	}
	var res result.Result
	if err := cmp.DecodeFirst(out.Bytes(), &res); err != nil {
		return nil, wall, mem, err
	}
	for _, w := range res.Workloads {
		if w.Data != nil {
			return w.Data, wall, mem, nil
		}
	}
	return nil, wall, mem, errors.New("etcdbench diagnose data gave no data")
}

// measure predicts m's costs from its stopped data dir with diagnose
// data, then restarts it with the page cache dropped, has it send its
// snapshot to a new member in dir (removed again), defragments it,
// saves a snapshot of it into dir and stops it again.
func measure(ctx context.Context, m *member, dir, etcdbench, etcdctl string, stderr io.Writer) (observation, error) {
	ob := observation{Etcd: m.kind.Name, Target: m.target}
	ob.Load, _ = cmp.LoadAverage()
	d, wall, _, err := diagnoseData(ctx, etcdbench, m.dataDir, "--dir", dir)
	if err != nil {
		return ob, err
	}
	if d.Predicted == nil {
		return ob, errors.New("etcdbench diagnose data predicted nothing")
	}
	ob.DBBytes, ob.InUseBytes, ob.Revisions = d.DB.SizeBytes, d.DB.InUseBytes, d.Revisions
	ob.WALEntries, ob.Predicted, ob.PredictWall = d.Predicted.WALEntries, d.Predicted, wall.Seconds()
	if err := dropCaches(); err != nil {
		return ob, err
	}
	restart, err := m.start(ctx)
	if err != nil {
		return ob, err
	}
	ob.Restart = restart.Seconds()
	sn, err := sendSnapshot(ctx, m, dir)
	if err != nil {
		return ob, errors.Join(err, m.stop())
	}
	ob.Send, ob.Receive, ob.ReceiveFsync, ob.SendWall = sn.Send, sn.Receive, sn.Fsync, sn.Wall
	defrag, err := cmp.RunChild(ctx, nil, etcdctl, "--endpoints", m.client, "--command-timeout", "10m", "defrag")
	if err != nil {
		return ob, errors.Join(err, m.stop())
	}
	ob.Defrag = defrag.Wall.Seconds()
	snap := filepath.Join(dir, "snapshot.db")
	saved, err := cmp.RunChild(ctx, nil, etcdctl, "--endpoints", m.client, "--command-timeout", "10m", "snapshot", "save", snap)
	os.Remove(snap)
	if err != nil {
		return ob, errors.Join(err, m.stop())
	}
	ob.Snapshot = saved.Wall.Seconds()
	p := ob.Predicted
	fmt.Fprintf(stderr, "%s %s: restart %.2f s (predicted %.2f), defrag %.2f s (%.2f), snapshot sent %.2f s (%.2f; received %.2f s, its fsync %.2f s, new member's start to sent %.2f s, etcdctl snapshot save %.2f s); prediction took %.1f s\n", ob.Etcd, ob.Target,
		ob.Restart, p.RestartSeconds, ob.Defrag, p.DefragSeconds, ob.Send, p.SnapshotSendSeconds, ob.Receive, ob.ReceiveFsync, ob.SendWall, ob.Snapshot, ob.PredictWall)
	return ob, m.stop()
}

// analyse times diagnose data --predict=false on m's stopped data dir.
func analyse(ctx context.Context, etcdbench string, m *member) (analysis, error) {
	a := analysis{Etcd: m.kind.Name, Target: m.target}
	d, wall, mem, err := diagnoseData(ctx, etcdbench, m.dataDir, "--predict=false")
	a.Wall, a.MaxRSS, a.MaxAnon = wall.Seconds(), mem.rss, mem.anon
	if d != nil {
		a.DBBytes = d.DB.SizeBytes
	}
	return a, err
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

// memory is a child's peak resident set and peak anonymous memory.
type memory struct{ rss, anon int64 }

// sampleAnon records the peak of pid's RssAnon into *peak every 20 ms
// until the returned func is called.
func sampleAnon(pid int, peak *int64) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	status := fmt.Sprintf("/proc/%d/status", pid)
	go func() {
		defer close(exited)
		for {
			if b, err := os.ReadFile(status); err == nil {
				*peak = max(*peak, parseRssAnon(b))
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-exited }
}

// parseRssAnon reads RssAnon (kB) from a /proc/PID/status, in bytes; 0
// when it is not there.
func parseRssAnon(b []byte) int64 {
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
