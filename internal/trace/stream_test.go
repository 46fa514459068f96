package trace

import (
	"testing"
	"time"
)

// recorder is an Observer that keeps what it is given.
type recorder struct {
	attached int
	seen     []Observed
	lost     int64
}

func (r *recorder) Attached()          { r.attached++ }
func (r *recorder) Observe(o Observed) { r.seen = append(r.seen, o) }
func (r *recorder) Lost(n int64)       { r.lost = n }

// TestCollectorObserver: with an observer, every write and sync goes to it
// with the bytes and writes since the descriptor's last sync and the CPU
// wait capped at the sync's latency, and the collector keeps no
// statistics and no file list of its own.
func TestCollectorObserver(t *testing.T) {
	c := newCollector(0)
	r := &recorder{}
	c.observer = r
	for _, e := range []event{
		{Call: callOpen, FD: 7, Class: ClassSnap, Path: "/d/member/snap/1.snap"},
		{Ret: 300, FD: 5, Call: callWrite, Class: ClassWAL},
		{Ret: 200, FD: 5, Call: callPwrite, Class: ClassWAL},
		{Latency: 2e6, Runq: 5e5, FD: 5, Call: callFdatasync, Class: ClassWAL},
		{Latency: 1e6, Runq: 3e6, FD: 5, Call: callFsync, Class: ClassWAL},
		{Ret: -5, FD: 5, Call: callFdatasync, Class: ClassWAL},
		{Latency: 1e6, FD: 7, Call: callFsync, Class: ClassSnap},
	} {
		c.add(e)
	}
	want := []Observed{
		{Class: ClassWAL, Bytes: 300, Writes: 1},
		{Class: ClassWAL, Bytes: 200, Writes: 1},
		{Class: ClassWAL, Sync: true, Latency: 2 * time.Millisecond, CPUWait: 500 * time.Microsecond, Bytes: 500, Writes: 2},
		{Class: ClassWAL, Sync: true, Fsync: true, Latency: time.Millisecond, CPUWait: time.Millisecond},
		{Class: ClassWAL, Sync: true, Failed: true},
		{Class: ClassSnap, Sync: true, Fsync: true, Latency: time.Millisecond},
	}
	if len(r.seen) != len(want) {
		t.Fatalf("observed %d calls, want %d: %+v", len(r.seen), len(want), r.seen)
	}
	for i := range want {
		if r.seen[i] != want[i] {
			t.Errorf("call %d: %+v, want %+v", i, r.seen[i], want[i])
		}
	}
	if wal := c.classes[ClassWAL]; wal.syncs() != 0 || wal.writes != 0 || wal.syncLat.TotalCount() != 0 || len(wal.secs) != 0 {
		t.Errorf("the collector kept statistics with an observer: %d syncs, %d writes", wal.syncs(), wal.writes)
	}
	if len(c.used) != 0 || len(c.classes[ClassWAL].pending) != 0 {
		t.Errorf("kept %d files and %d pending descriptors, want none", len(c.used), len(c.classes[ClassWAL].pending))
	}
}
