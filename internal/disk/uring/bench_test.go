package uring

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// BenchmarkRandRead4K is fio --ioengine=io_uring --rw=randread --bs=4k
// --iodepth=8 --direct=1 --size=64m: random 4 KiB reads over a 64 MiB
// file, 8 in flight, one op per read. The file lives under os.TempDir()
// (set TMPDIR to measure another filesystem); O_DIRECT is dropped, and
// logged, where the filesystem refuses it.
func BenchmarkRandRead4K(b *testing.B) {
	requireUring(b)
	const (
		depth  = 8
		bs     = 4096
		blocks = 64 << 20 / bs
	)
	path := filepath.Join(b.TempDir(), "randread")
	writeBlocks(b, path, blocks)
	fd, direct := openDirect(b, path)
	b.Logf("file %s, O_DIRECT %v", path, direct)
	bufs, unmap, err := AlignedBuffers(depth, bs)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = unmap() })
	r := newRing(b, depth)
	rng := rand.New(rand.NewPCG(3, 4))
	cqes := make([]CQE, depth)
	free := make([]int, 0, depth) // slots whose buffer is not in flight
	for slot := range depth {
		free = append(free, slot)
	}

	b.SetBytes(bs)
	b.ResetTimer()
	issued, done := 0, 0
	for done < b.N {
		for len(free) > 0 && issued < b.N {
			slot := free[len(free)-1]
			free = free[:len(free)-1]
			off := int64(rng.IntN(blocks)) * bs
			if !r.PrepRead(fd, bufs[slot], off, uint64(slot)) {
				b.Fatal("PrepRead: SQ full with a free slot")
			}
			issued++
		}
		if _, err := r.Submit(1); err != nil {
			b.Fatal(err)
		}
		n := r.Reap(cqes)
		for _, c := range cqes[:n] {
			if c.Res != bs {
				b.Fatalf("read completed with Res %d, want %d", c.Res, bs)
			}
			free = append(free, int(c.UserData))
		}
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IOPS")
}
