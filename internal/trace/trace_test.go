package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadFDs reads a fixture /proc: etcd's WAL segment, the next one
// being prepared, its db, a snapshot and other files (a log) are traced,
// a socket and /dev/null are not.
func TestReadFDs(t *testing.T) {
	root := t.TempDir()
	fdDir := filepath.Join(root, "42", "fd")
	if err := os.MkdirAll(fdDir, 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"3": "/var/lib/etcd/member/wal/0000000000000000-0000000000000000.wal",
		"4": "/var/lib/etcd/member/wal/0.tmp",
		"5": "/var/lib/etcd/member/snap/db",
		"6": "/var/lib/etcd/member/snap/0000000000000002-0000000000002711.snap",
		"7": "socket:[12345]",
		"8": "/var/log/etcd.log",
		"9": "/dev/null",
	}
	for fd, target := range links {
		if err := os.Symlink(target, filepath.Join(fdDir, fd)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readFDs(root, 42)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32]Class{3: ClassWAL, 4: ClassWAL, 5: ClassDB, 6: ClassSnap, 8: ClassOther}
	if len(got) != len(want) {
		t.Errorf("traced %v, want %v", got, want)
	}
	for fd, c := range want {
		if got[fd].Class != c || got[fd].Path != links[fmt.Sprint(fd)] {
			t.Errorf("fd %d: %+v, want %v", fd, got[fd], c)
		}
	}
	if _, err := readFDs(root, 43); err == nil {
		t.Error("a missing process read without error")
	}
}

func encodeEvent(e event) []byte {
	b := make([]byte, eventSize)
	le := binary.LittleEndian
	le.PutUint64(b[0:], e.End)
	le.PutUint64(b[8:], e.Latency)
	le.PutUint64(b[16:], uint64(e.Ret))
	le.PutUint64(b[24:], e.Count)
	le.PutUint32(b[32:], e.Tid)
	le.PutUint32(b[36:], e.FD)
	le.PutUint32(b[40:], uint32(e.Call))
	le.PutUint32(b[44:], uint32(e.Class))
	le.PutUint64(b[48:], e.Runq)
	if e.Call == callOpen { // the path follows, NUL-padded
		p := make([]byte, pathBytes)
		copy(p, e.Path)
		b = append(b, p...)
	}
	return b
}

func TestDecodeEvent(t *testing.T) {
	want := event{End: 1e9, Latency: 12345, Ret: -5, Count: 4096, Tid: 7, FD: 9, Call: callFdatasync, Class: ClassWAL, Runq: 678}
	got, err := decodeEvent(encodeEvent(want))
	if err != nil || got != want {
		t.Fatalf("decodeEvent = %+v, %v; want %+v", got, err, want)
	}
	if _, err := decodeEvent(make([]byte, eventSize-1)); !errors.Is(err, errShortEvent) {
		t.Errorf("short record: %v, want errShortEvent", err)
	}
}

// TestCollectorCPUWait: each sync's wait for a CPU and the rest are
// recorded apart, a wait longer than the sync (it cannot be) counts as
// the whole sync, and the note names the CPU when the wait makes the p99.
func TestCollectorCPUWait(t *testing.T) {
	c := newCollector(0)
	for i := range 100 {
		e := event{End: uint64(i) * 1e6, Latency: 200e3, Call: callFdatasync, Class: ClassWAL, FD: 3}
		if i >= 95 { // the slowest 5 % waited 4 ms for a CPU
			e.Latency, e.Runq = 4200e3, 4000e3
		}
		c.add(e)
	}
	c.add(event{End: 200e6, Latency: 100e3, Runq: 300e3, Call: callFdatasync, Class: ClassWAL, FD: 3})
	wal := c.classes[ClassWAL]
	if got, want := time.Duration(wal.waitNs), 5*4*time.Millisecond+100*time.Microsecond; got != want {
		t.Errorf("waited %v in all, want %v", got, want)
	}
	if own := time.Duration(wal.syncOwn.ValueAtPercentile(99)); own < 190*time.Microsecond || own > 210*time.Microsecond {
		t.Errorf("p99 without the wait %v, want about 200µs", own)
	}
	if n := cpuWaitNote(wal); !strings.Contains(n, "CPU contention") {
		t.Errorf("note %q does not name the CPU", n)
	}
	quiet := newCollector(0)
	quiet.add(event{End: 1, Latency: 200e3, Runq: 5e3, Call: callFdatasync, Class: ClassWAL, FD: 3})
	if n := cpuWaitNote(quiet.classes[ClassWAL]); n != "" {
		t.Errorf("a 5µs wait in a 200µs sync got the note %q", n)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add(encodeEvent(event{End: 1, Latency: 2, Ret: 3, Count: 4, Call: callWrite, Class: ClassDB}))
	f.Add([]byte{1, 2, 3})
	// One collector for every input: a new one allocates several large
	// histograms, which made each execution slow enough that the fuzzing
	// engine's workers missed its stop deadline.
	c := newCollector(0)
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEvent(b)
		if err != nil {
			return
		}
		c.add(e) // any event, even nonsense, must be counted or ignored without panicking
		if again, _ := decodeEvent(encodeEvent(e)); again != e {
			t.Fatalf("round trip %+v -> %+v", e, again)
		}
	})
}

// TestCollector feeds a WAL-like pattern: two writes then a sync, on two
// segments, and a failed write.
func TestCollector(t *testing.T) {
	start := uint64(10 * time.Second)
	c := newCollector(start)
	at := func(d time.Duration) uint64 { return start + uint64(d) }
	evs := []event{
		{End: at(100 * time.Millisecond), Latency: 5000, Ret: 300, FD: 5, Call: callWrite, Class: ClassWAL},
		{End: at(200 * time.Millisecond), Latency: 5000, Ret: 200, FD: 5, Call: callWrite, Class: ClassWAL},
		{End: at(300 * time.Millisecond), Latency: 2e6, FD: 5, Call: callFdatasync, Class: ClassWAL},
		{End: at(1500 * time.Millisecond), Latency: 5000, Ret: 1000, FD: 6, Call: callWrite, Class: ClassWAL},
		{End: at(1600 * time.Millisecond), Latency: 4e6, FD: 6, Call: callFdatasync, Class: ClassWAL},
		{End: at(1700 * time.Millisecond), Latency: 4e6, FD: 6, Call: callFdatasync, Class: ClassWAL}, // nothing written since
		{End: at(1800 * time.Millisecond), Latency: 100, Ret: -28, FD: 6, Call: callWrite, Class: ClassWAL},
		{End: at(1900 * time.Millisecond), Latency: 3e6, FD: 8, Call: callFdatasync, Class: ClassDB},
		{End: at(1900 * time.Millisecond), Latency: 3e6, FD: 99, Call: callFdatasync, Class: ClassNone},
	}
	for _, e := range evs {
		c.add(e)
	}
	wal := c.classes[ClassWAL]
	if wal.writes != 3 || wal.writeBytes != 1500 || wal.fdatasyncs != 3 || wal.failed != 1 {
		t.Errorf("wal: %d writes, %d bytes, %d fdatasyncs, %d failed; want 3, 1500, 3, 1", wal.writes, wal.writeBytes, wal.fdatasyncs, wal.failed)
	}
	if n := wal.bytesPerSync.Count(); n != 2 {
		t.Errorf("%d bytes-per-sync samples, want 2 (a sync after no writes is not one)", n)
	}
	if bs, ok := RecommendedBS(wal); !ok || bs < 500 || bs > 1001 {
		t.Errorf("recommended bs %d (%v), want the median of 500 and 1000", bs, ok)
	}
	if mean := wal.writesPerSync.Mean(); mean != 1.5 {
		t.Errorf("writes per sync mean %g, want 1.5", mean)
	}
	s := wal.series(2)
	if len(s) != 2 || s[0].Ops != 1 || s[1].Ops != 2 {
		t.Errorf("series %+v, want 1 sync in second 1 and 2 in second 2", s)
	}
	if c.classes[ClassDB].fdatasyncs != 1 || c.events != 8 {
		t.Errorf("db fdatasyncs %d, events %d; want 1 and 8 (the unclassified one ignored)", c.classes[ClassDB].fdatasyncs, c.events)
	}
}
