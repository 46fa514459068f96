package cost

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/disk"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// probeBytes is the disk probes' size for a db of dbBytes.
func (l Limits) probeBytes(dbBytes int64) int64 {
	return min(max(dbBytes, l.DiskMin), l.DiskMax) &^ (1<<20 - 1)
}

// diskBandwidths runs disk's recovery (sequential read, page cache
// defeated, no random reads) and snapshot (sequential write, then
// fdatasync) workloads over size bytes in dir and returns their
// bandwidths in B/s: the read's, and the write's until durable.
func diskBandwidths(ctx context.Context, dir string, size int64) (read, write float64, err error) {
	env := disk.Env{Dir: dir, Root: "/", Facts: sysinfo.Collect("/", dir), Thresholds: verdict.Defaults()}
	p := disk.Preset{
		Recovery: disk.RecoveryParams{BlockSize: 1 << 20, Size: size, Runtime: 2 * time.Minute},
		Snapshot: disk.SeqParams{BlockSize: 1 << 20, Size: size, Runtime: 2 * time.Minute},
	}
	bw := func(name string) (float64, error) {
		spec, ok := disk.Lookup(name)
		if !ok {
			return 0, fmt.Errorf("cost: disk has no %s workload", name)
		}
		w, err := spec.Build(p, disk.NewSettings(nil))
		if err != nil {
			return 0, fmt.Errorf("cost: building disk %s: %w", name, err)
		}
		wl, err := w.Run(ctx, env)
		if err != nil {
			return 0, fmt.Errorf("cost: disk %s in %s: %w", name, dir, err)
		}
		if wl.BytesPerSec <= 0 {
			return 0, fmt.Errorf("cost: disk %s in %s measured no bandwidth", name, dir)
		}
		return wl.BytesPerSec, nil
	}
	if write, err = bw("snapshot"); err != nil {
		return 0, 0, err
	}
	if read, err = bw("recovery"); err != nil {
		return 0, 0, err
	}
	return read, write, nil
}

// populateRate is how fast this disk fills a cold mapping the way bbolt
// opens etcd's db (mmap with MAP_POPULATE: the kernel reads the file in
// through the page cache with its readahead), in B/s over a file of size
// bytes written in dir and dropped from the cache first.
func populateRate(dir string, size int64) (float64, error) {
	path := filepath.Join(dir, "populate")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return 0, fmt.Errorf("cost: creating %s: %w", path, err)
	}
	defer os.Remove(path)
	defer f.Close()
	chunk := make([]byte, 1<<20)
	if _, err := rand.Read(chunk); err != nil {
		return 0, err
	}
	for off := int64(0); off < size; off += int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(int64(len(chunk)), size-off)]); err != nil {
			return 0, fmt.Errorf("cost: writing %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return 0, fmt.Errorf("cost: dropping %s from the page cache: %w", path, err)
	}
	start := time.Now()
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("cost: mapping %s: %w", path, err)
	}
	if err := unix.Munmap(m); err != nil {
		return 0, err
	}
	return float64(size) / max(took.Seconds(), 1e-9), nil
}
