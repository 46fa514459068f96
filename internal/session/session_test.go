package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/disk"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/result"
)

func TestMain(m *testing.M) {
	// The embedded etcd's members are this test binary, re-executed.
	if code, ok := etcdcluster.MaybeRunMember(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// writer is a disk workload that writes one file where it is told to
// and says where.
type writer struct{ wrote string }

func (w *writer) SpaceNeeded() int64 { return 1 << 20 }

func (w *writer) Run(ctx context.Context, env disk.Env) (result.Workload, error) {
	w.wrote = filepath.Join(env.Dir, "data")
	if err := os.WriteFile(w.wrote, make([]byte, 4096), 0o600); err != nil {
		return result.Workload{}, err
	}
	return result.Workload{Name: "writer"}, ctx.Err()
}

// A session's phases in order: the disk workloads write in scratch/disk,
// which is gone before the etcd starts in scratch/etcd; Close stops the
// etcd and removes the scratch directory, leaving the directory under
// test as it was.
func TestPhases(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(Options{Dir: dir, Need: EmbeddedSpace(1), Hint: "free some space", Args: []string{"test"}})
	if err != nil {
		t.Fatal(err)
	}
	scratch := s.Run.Scratch.Path
	if filepath.Dir(scratch) != dir || s.Run.Result.Environment.Dir == "" {
		t.Fatalf("scratch %s (want inside %s), environment %+v", scratch, dir, s.Run.Result.Environment)
	}
	w := &writer{}
	wls, _, err := s.Disk(ctx, []disk.Named{{Name: "writer", Workload: w}})
	if err != nil || len(wls) != 1 || wls[0].Name != "writer" {
		t.Fatalf("Disk: %v %+v", err, wls)
	}
	if filepath.Dir(w.wrote) != filepath.Join(scratch, "disk") {
		t.Fatalf("the workload wrote %s, want it in scratch/disk", w.wrote)
	}
	if _, err := os.Stat(filepath.Dir(w.wrote)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("scratch/disk after the disk phase: %v, want it removed", err)
	}
	c, err := s.StartEtcd(ctx, etcdcluster.Options{Members: 1, Dir: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(scratch, "etcd", "member0")); err != nil {
		t.Fatalf("the embedded etcd's data: %v, want it in scratch/etcd", err)
	}
	if pids := c.PIDs(); len(pids) != 1 || pids[0] == os.Getpid() {
		t.Fatalf("member PIDs %v: want one process of its own", pids)
	}
	res, err := s.Finish(ctx, wls, nil)
	if err != nil || res.Interrupted || len(res.Workloads) != 1 || res.FinishedAt.IsZero() {
		t.Fatalf("Finish: %v %+v", err, res)
	}
	s.Close(&err)
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(scratch); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("scratch directory after Close: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in the directory under test: %v", left)
	}
}

// An interrupted disk phase keeps what ran, and Finish marks the result
// interrupted.
func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Open(Options{Dir: dir, Need: 1 << 20, Hint: "free some space"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(&err)
	cancel()
	wls, _, derr := s.Disk(ctx, []disk.Named{{Name: "writer", Workload: &writer{}}})
	if !errors.Is(derr, context.Canceled) {
		t.Fatalf("Disk on a cancelled context: %v %+v", derr, wls)
	}
	res, ferr := s.Finish(ctx, wls, derr)
	if !errors.Is(ferr, context.Canceled) || res == nil || !res.Interrupted {
		t.Fatalf("Finish: %v %+v", ferr, res)
	}
}

// A directory without the space asked for is refused with the hint, and
// nothing is written.
func TestOpenShortOfSpace(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(Options{Dir: dir, Need: 1 << 60, Hint: "free some space, or use --quick"})
	if err == nil || !strings.Contains(err.Error(), "use --quick") {
		t.Fatalf("Open with 1 EiB needed: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in the directory: %v", left)
	}
}
