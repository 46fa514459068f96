// Package fusedelay is a test helper: a FUSE passthrough of a directory
// whose fsync and fdatasync wait a configurable time before syncing the
// real file, so that a test can run a real etcd on a disk that is slow in
// exactly the way etcd is sensitive to. Everything else (reads, writes,
// renames, fallocate) goes straight to the backing directory.
//
// Mounting needs /dev/fuse and the right to mount (root, or fusermount3);
// Mount skips the test with the reason when either is missing.
package fusedelay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// ErrUnavailable is returned by New when FUSE cannot be used here.
var ErrUnavailable = errors.New("fusedelay: FUSE is not available")

// FS is a mounted delaying passthrough.
type FS struct {
	// Dir is the mount point: files created under it live in the backing
	// directory.
	Dir    string
	server *fuse.Server
	delay  atomic.Int64 // nanoseconds
	syncs  atomic.Int64
}

// SetDelay changes the delay of the following syncs.
func (f *FS) SetDelay(d time.Duration) { f.delay.Store(int64(d)) }

// Syncs returns how many fsync/fdatasync calls the filesystem served.
func (f *FS) Syncs() int64 { return f.syncs.Load() }

// node is a loopback node whose Fsync waits first.
type node struct {
	fs.LoopbackNode
	owner *FS
}

var _ = (fs.NodeFsyncer)((*node)(nil))

// Fsync waits the delay, then syncs the backing file. The kernel sends
// FUSE_FSYNC for both fsync(2) and fdatasync(2). The wait ignores the
// kernel's interrupt: Go's preemption signals interrupt the caller's
// syscall all the time, and a real disk never fails a sync with EINTR
// (bbolt in etcd 3.4 treats that as fatal).
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	n.owner.syncs.Add(1)
	if d := time.Duration(n.owner.delay.Load()); d > 0 {
		time.Sleep(d)
	}
	if s, ok := f.(fs.FileFsyncer); ok {
		return s.Fsync(ctx, flags)
	}
	// No handle of the loopback's own: the kernel sends FUSE_FSYNC only
	// on open files, so there is nothing left to sync.
	return fs.OK
}

// Usable reports whether /dev/fuse can be opened, and why not.
func Usable() error {
	fd, err := syscall.Open("/dev/fuse", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%w: opening /dev/fuse: %v", ErrUnavailable, err)
	}
	syscall.Close(fd)
	return nil
}

// New mounts a passthrough of backing at mountpoint (both existing
// directories) whose syncs wait delay. Close unmounts it.
func New(backing, mountpoint string, delay time.Duration) (*FS, error) {
	if err := Usable(); err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		return nil, fmt.Errorf("fusedelay: backing directory: %w", err)
	}
	f := &FS{Dir: mountpoint}
	f.SetDelay(delay)
	root := &fs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev)}
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: r}, owner: f}
	}
	rootNode := &node{LoopbackNode: fs.LoopbackNode{RootData: root}, owner: f}
	root.RootNode = rootNode
	timeout := time.Second
	srv, err := fs.Mount(mountpoint, rootNode, &fs.Options{
		AttrTimeout: &timeout, EntryTimeout: &timeout,
		MountOptions: fuse.MountOptions{
			FsName: "fusedelay:" + backing, Name: "fusedelay",
			// Root mounts with mount(2) itself; others fall back to
			// fusermount3.
			DirectMount: os.Geteuid() == 0,
			AllowOther:  os.Geteuid() == 0,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: mounting %s: %v", ErrUnavailable, mountpoint, err)
	}
	f.server = srv
	return f, nil
}

// Close unmounts the filesystem, lazily when a process still uses it.
func (f *FS) Close() error {
	if f.server == nil {
		return nil
	}
	err := f.server.Unmount()
	if err != nil {
		// A file still open (a killed process not yet reaped): detach.
		if derr := syscall.Unmount(f.Dir, syscall.MNT_DETACH); derr != nil {
			if out, ferr := exec.Command("fusermount3", "-u", "-z", f.Dir).CombinedOutput(); ferr != nil {
				return fmt.Errorf("fusedelay: unmounting %s: %v; detach: %v; fusermount3: %v %s", f.Dir, err, derr, ferr, out)
			}
		}
		f.server.Wait()
	}
	f.server = nil
	return nil
}

// Mount mounts a passthrough of backing whose syncs wait delay on a new
// directory and returns it; the test's cleanup unmounts it (also when
// the test fails). It skips the test when FUSE cannot be used here.
func Mount(t testing.TB, backing string, delay time.Duration) *FS {
	t.Helper()
	mp := t.TempDir()
	f, err := New(backing, mp, delay)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v (needs /dev/fuse and root or fusermount3)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Registered after TempDir's cleanup, so it runs before it.
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return f
}
