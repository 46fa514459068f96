// Package zoo is the storage zoo that tests and benches share: storages
// whose limits are known by construction, each set up in a directory as
// a Place where a test or a bench puts etcd's data (or etcdbench's
// scratch directory) and runs the processes under test.
//
//   - plain: the directory itself;
//   - iops-N and bw-N: the kernel's block throttle (cgroup v1 blkio, or
//     v2 io.max) on the disk's write IOPS or write bytes/s, as cloud
//     volumes are sold; it holds processes that join the Place's cgroup
//     (Place.Wrap before they start), not the caller;
//   - fuse-rate and fuse-slow-sync: fusedelay's token bucket on syncs
//     and its delay plus bandwidth;
//   - latency-tail: a FUSE passthrough whose syncs wait a delay drawn
//     from a log-normal distribution (a median and a p99, seeded), as a
//     network block device: latency-tail's p99 (8 ms) sits at etcd's WAL
//     limit, network-block's (5 ms) under it, its commits near theirs;
//   - burst: a blkio throttle at a peak rate while I/O credits last and
//     at a baseline once they are spent, credits refilling at the
//     baseline (gp2's and Azure's burstable volumes);
//   - competing-writer: the directory itself with another writer on it,
//     appending and fdatasyncing a file of its own at a fixed rate;
//   - busy, busy-competing-writer, busy-iops-N: a storage on a machine
//     whose CPUs neighbours saturate (twice as many spinning processes
//     as CPUs), the common case on a control-plane node;
//   - busy-go-alloc: busy, and beside it a Go process that allocates and
//     collects as kube-apiserver does (a live heap of 128 MiB, its
//     collector marking on every CPU; GoAlloc), etcd's usual neighbour
//     on a control-plane node.
//
// Each Storage is a name, a description and a Setup; Setup fails with
// ErrUnavailable when the machine cannot make it (no root, no FUSE, no
// blkio), and SetupT turns that into a skip.
package zoo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"etcdbench/internal/fusedelay"
)

// ErrUnavailable is returned by Setup when this machine cannot make the
// storage (not root, no /dev/fuse, no blkio or io controller, a
// directory on no block device).
var ErrUnavailable = errors.New("zoo: storage not available here")

// Storage is one kind of storage of the zoo.
type Storage struct {
	// Name is short, for flags and tables, e.g. "iops-500".
	Name string
	// About says what the storage is and what limits it.
	About string
	// InCgroup is true when the storage holds back only processes in its
	// cgroup (Place.Wrap): a caller that does I/O itself is not held.
	InCgroup bool
	setup    func(ctx context.Context, dir string, p *Place) error
}

// Place is a storage set up in a directory.
type Place struct {
	// Dir is where to put the data: the directory itself, or a FUSE
	// mount over a backing directory inside it.
	Dir string
	// Cgroup is the throttled cgroup processes must join, nil when the
	// storage needs none.
	Cgroup *Cgroup
	// FS is the FUSE passthrough of the FUSE storages, nil otherwise.
	FS *fusedelay.FS
	// Competitor is the competing writer's, nil otherwise.
	Competitor *Writer
	// Neighbours is how many CPU-bound processes a busy storage runs
	// beside the processes under test, 0 otherwise.
	Neighbours int
	// GoAlloc is the Go neighbour of a go-alloc storage (GoAlloc), nil
	// otherwise.
	GoAlloc *GoAllocator
	// Spend, set on a burst bucket, spends its credits at once: the
	// volume is at its baseline until it saves a second of the peak's
	// excess again. A measurement of the sustained rate calls it before
	// each step, so that no step runs on credits.
	Spend func(ctx context.Context) error

	closers []func() error
	mu      sync.Mutex
	notes   []string
}

// Setup makes the storage in dir (an existing directory on the disk to
// bend) and returns where to put data. Close undoes it.
func (s Storage) Setup(ctx context.Context, dir string) (*Place, error) {
	p := &Place{Dir: dir}
	if s.setup != nil {
		if err := s.setup(ctx, dir, p); err != nil {
			return nil, errors.Join(fmt.Errorf("zoo: %s: %w", s.Name, err), p.Close())
		}
	}
	return p, nil
}

// SetupT is Setup for a test: in a new temporary directory under dir ("":
// t.TempDir()), closed at the test's cleanup; it skips the test with the
// reason when the storage is not available here.
func (s Storage) SetupT(t testing.TB, dir string) *Place {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	} else {
		d, err := os.MkdirTemp(dir, "zoo-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		dir = d
	}
	p, err := s.Setup(context.Background(), dir)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return p
}

// Wrap makes cmd (not yet started) join the place's cgroup before it
// runs; without a cgroup it leaves cmd alone.
func (p *Place) Wrap(cmd *exec.Cmd) {
	if p.Cgroup != nil {
		p.Cgroup.Wrap(cmd)
	}
}

// Command is exec.CommandContext, wrapped to run inside the place.
func (p *Place) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	p.Wrap(cmd)
	return cmd
}

// Notes are what happened to the storage while it was in use (a burst
// bucket's credits spent), in order.
func (p *Place) Notes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.notes...)
}

func (p *Place) note(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, fmt.Sprintf(format, a...))
}

func (p *Place) onClose(f func() error) { p.closers = append(p.closers, f) }

// Close undoes the setup, last step first.
func (p *Place) Close() error {
	var errs []error
	for i := len(p.closers) - 1; i >= 0; i-- {
		errs = append(errs, p.closers[i]())
	}
	p.closers = nil
	return errors.Join(errs...)
}

// Lookup returns the storages of zoo named in names (comma-separated;
// "" or "all": every one), in zoo's order.
func Lookup(zoo []Storage, names string) ([]Storage, error) {
	if names == "" || names == "all" {
		return zoo, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		want[strings.TrimSpace(n)] = true
	}
	var out []Storage
	var known []string
	for _, s := range zoo {
		known = append(known, s.Name)
		if want[s.Name] {
			out = append(out, s)
			delete(want, s.Name)
		}
	}
	for n := range want {
		return nil, fmt.Errorf("zoo: unknown storage %q (want some of %s)", n, strings.Join(known, ", "))
	}
	return out, nil
}
