package disk

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkWALLoopOverhead measures the cost of etcdbench's own loop per
// write+fdatasync cycle: on tmpfs (/dev/shm) fdatasync has no device to wait
// for, so what remains is the system calls plus the timing and recording.
// Compare with fio on the same tmpfs (bench/wal-vs-fio --dir /dev/shm/...).
func BenchmarkWALLoopOverhead(b *testing.B) {
	for _, bs := range []int{512, 2300, 8000} {
		b.Run(fmt.Sprintf("bs=%d", bs), func(b *testing.B) {
			base := "/dev/shm"
			if st, err := os.Stat(base); err != nil || !st.IsDir() {
				base = ""
			}
			dir, err := os.MkdirTemp(base, "etcdbench-bench-")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			cfg := WALConfig{BlockSize: bs, Count: int64(b.N), Mode: ModeCount, SegmentBytes: 16 << 20, Rule: rule(10 * time.Millisecond)}
			b.SetBytes(int64(bs))
			b.ResetTimer()
			run, err := RunWAL(context.Background(), dir, cfg)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(run.Elapsed.Nanoseconds())/float64(run.Ops), "loop-ns/cycle")
		})
	}
}
