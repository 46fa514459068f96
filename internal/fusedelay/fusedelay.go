// Package fusedelay is a FUSE passthrough of a directory whose fsync and
// fdatasync wait a configurable time before syncing the real file, so
// that a real etcd runs on a disk that is slow in exactly the way etcd
// is sensitive to: for tests and benches (testutil/fusedelay mounts it
// for a test), and for `drill slow-follower-disk`. Everything else (reads, writes,
// renames, fallocate) goes straight to the backing directory.
//
// Two more models make storages whose limits are known by construction,
// for tests of a capacity sweep: a sync rate cap (a token bucket, as cloud
// volumes cap IOPS: each sync takes a token or waits for one), and a
// bandwidth (each sync also waits for the bytes written since the last
// sync at that many bytes per second, so its latency grows with the
// queue of data it flushes). A sync waits the token first, then the
// delay plus the bytes' time.
//
// Mounting needs /dev/fuse and the right to mount (root, or fusermount3):
// New says ErrUnavailable when either is missing.
package fusedelay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
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
	// delayFn, when set, draws each sync's delay in place of delay.
	delayFn atomic.Pointer[func() time.Duration]
	// bandwidth in bytes per second (0: none) and the bytes written
	// since the last sync, which the next sync waits for.
	bandwidth atomic.Int64
	dirty     atomic.Int64

	mu     sync.Mutex
	rate   float64   // tokens per second; 0: no rate cap
	burst  float64   // the most tokens the bucket holds
	tokens float64   // tokens in the bucket at last
	last   time.Time // when tokens was last brought up to date
}

// SetDelay changes the delay of the following syncs.
func (f *FS) SetDelay(d time.Duration) { f.delay.Store(int64(d)) }

// SetDelayFunc makes each following sync wait next() in place of the
// fixed delay (a latency drawn from a distribution); nil goes back to
// the fixed delay. next is called from many goroutines at once.
func (f *FS) SetDelayFunc(next func() time.Duration) {
	if next == nil {
		f.delayFn.Store(nil)
		return
	}
	f.delayFn.Store(&next)
}

// SetRateCap caps syncs at perSec per second with a token bucket that
// holds burst tokens (at least one), full at first: a sync takes a token,
// or waits for the next one. Under a steady rate above the cap every
// sync waits about 1/perSec; the burst only absorbs occasional extra
// syncs (a file's creation, a directory's). 0 removes the cap.
func (f *FS) SetRateCap(perSec float64, burst int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rate, f.burst = max(perSec, 0), float64(max(burst, 1))
	f.tokens, f.last = f.burst, time.Now()
}

// SetBandwidth makes each sync also wait for the bytes written since the
// previous sync at bytesPerSec; 0 removes it.
func (f *FS) SetBandwidth(bytesPerSec int64) { f.bandwidth.Store(bytesPerSec) }

// wait is how long the sync starting now waits in all: its token, then
// the delay and its bytes' time.
func (f *FS) wait(now time.Time) time.Duration {
	d := time.Duration(f.delay.Load())
	if fn := f.delayFn.Load(); fn != nil {
		d = (*fn)()
	}
	bytes := f.dirty.Swap(0)
	if bw := f.bandwidth.Load(); bw > 0 {
		d += time.Duration(float64(bytes) / float64(bw) * float64(time.Second))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rate > 0 {
		if now.After(f.last) {
			f.tokens = min(f.burst, f.tokens+now.Sub(f.last).Seconds()*f.rate)
			f.last = now
		}
		f.tokens-- // may go below zero: the wait until it is back to zero
		if f.tokens < 0 {
			d += time.Duration(-f.tokens / f.rate * float64(time.Second))
		}
	}
	return d
}

// Syncs returns how many fsync/fdatasync calls the filesystem served.
func (f *FS) Syncs() int64 { return f.syncs.Load() }

// node is a loopback node whose Fsync waits first.
type node struct {
	fs.LoopbackNode
	owner *FS
}

var (
	_ = (fs.NodeFsyncer)((*node)(nil))
	_ = (fs.NodeWriter)((*node)(nil))
	_ = (fs.NodeWritever)((*node)(nil))
)

// file is the loopback's file without kernel passthrough: the kernel
// would send writes straight to the backing file, and the bandwidth
// model needs to count them.
type file struct{ *fs.LoopbackFile }

// PassthroughFd declines passthrough, so writes come through Write.
func (*file) PassthroughFd() (int, bool) { return 0, false }

func wrap(fh fs.FileHandle) fs.FileHandle {
	if lf, ok := fh.(*fs.LoopbackFile); ok {
		return &file{lf}
	}
	return fh
}

// Create creates the file in the backing directory, without passthrough.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	ino, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	return ino, wrap(fh), fl, errno
}

// Open opens the backing file, without passthrough.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	return wrap(fh), fl, errno
}

// Write counts the bytes for the bandwidth model and writes them through.
func (n *node) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	w, ok := f.(fs.FileWriter)
	if !ok {
		return 0, syscall.EBADF
	}
	written, errno := w.Write(ctx, data, off)
	n.owner.dirty.Add(int64(written))
	return written, errno
}

// Writev is Write for data the kernel sent in pieces.
func (n *node) Writev(ctx context.Context, f fs.FileHandle, iov [][]byte, off int64) (uint32, syscall.Errno) {
	if w, ok := f.(fs.FileWritever); ok {
		written, errno := w.Writev(ctx, iov, off)
		n.owner.dirty.Add(int64(written))
		return written, errno
	}
	var data []byte
	for _, b := range iov {
		data = append(data, b...)
	}
	return n.Write(ctx, f, data, off)
}

// Fsync waits the delay, then syncs the backing file. The kernel sends
// FUSE_FSYNC for both fsync(2) and fdatasync(2). The wait ignores the
// kernel's interrupt: Go's preemption signals interrupt the caller's
// syscall all the time, and a real disk never fails a sync with EINTR
// (bbolt in etcd 3.4 treats that as fatal).
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	n.owner.syncs.Add(1)
	if d := n.owner.wait(time.Now()); d > 0 {
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
