package uring

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// requireUring skips tb when io_uring is refused here, so the suite passes
// on kernels and containers where callers would use the fallback.
func requireUring(tb testing.TB) {
	tb.Helper()
	if err := Probe(); err != nil {
		if !errors.Is(err, ErrUnsupported) {
			tb.Fatalf("Probe failed without wrapping ErrUnsupported: %v", err)
		}
		tb.Skipf("io_uring unavailable here (callers fall back to pread/pwrite): %v", err)
	}
}

// newRing creates a ring closed at the end of tb.
func newRing(tb testing.TB, entries uint32) *Ring {
	tb.Helper()
	r, err := New(entries)
	if err != nil {
		tb.Fatalf("New(%d): %v", entries, err)
	}
	tb.Cleanup(func() {
		if err := r.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return r
}

// openDirect opens path read-write with O_DIRECT, or without it when the
// filesystem refuses O_DIRECT (EINVAL, e.g. tmpfs), saying so in the log.
// The descriptor is closed at the end of tb.
func openDirect(tb testing.TB, path string) (fd int, direct bool) {
	tb.Helper()
	const flags = unix.O_RDWR | unix.O_CREAT | unix.O_CLOEXEC
	fd, err := unix.Open(path, flags|unix.O_DIRECT, 0o600)
	direct = err == nil
	if errors.Is(err, unix.EINVAL) {
		tb.Logf("O_DIRECT refused on %s (%v): using buffered I/O, so the page cache is in the path", filepath.Dir(path), err)
		fd, err = unix.Open(path, flags, 0o600)
	}
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	tb.Cleanup(func() { _ = unix.Close(fd) })
	return fd, direct
}

// writeBlocks creates path with blocks 4 KiB blocks, block i filled by
// blockPattern(i), synced to the device so direct reads find it there.
func writeBlocks(tb testing.TB, path string, blocks int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for i := range blocks {
		blockPattern(buf, i)
		if _, err := f.Write(buf); err != nil {
			tb.Fatalf("write %s: %v", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		tb.Fatalf("fsync %s: %v", path, err)
	}
}

// blockPattern fills b with bytes that identify block i and the position
// within it, so a read from the wrong offset cannot pass a comparison.
func blockPattern(b []byte, i int) {
	for j := range b {
		b[j] = byte(i*7 + j*13 + j>>8)
	}
}

// reapN reaps exactly n completions into a new slice, waiting as needed.
func reapN(tb testing.TB, r *Ring, n int) []CQE {
	tb.Helper()
	got := make([]CQE, 0, n)
	buf := make([]CQE, n)
	for len(got) < n {
		if err := r.WaitCQE(); err != nil {
			tb.Fatalf("WaitCQE after %d of %d completions: %v", len(got), n, err)
		}
		k := r.Reap(buf[:n-len(got)])
		got = append(got, buf[:k]...)
	}
	return got
}
