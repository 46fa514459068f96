package trace

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		path string
		want Class
	}{
		{"/var/lib/etcd/member/wal/0000000000000000-0000000000000000.wal", ClassWAL},
		{"/var/lib/etcd/member/wal/0.tmp", ClassWAL},
		{"/var/lib/etcd/member/snap/db", ClassDB},
		{"/var/lib/etcd/member/snap/0000000000000002-0000000000002711.snap", ClassSnap},
		{"/var/lib/etcd/member/snap/0000000000002711.snap.db", ClassSnap},
		{"socket:[12345]", ClassNone},
		{"/var/lib/etcd/member/wal", ClassNone},
		{"/tmp/db", ClassNone},
		{"/var/log/etcd.log", ClassNone},
	}
	for _, tc := range cases {
		if got := Classify(tc.path); got != tc.want {
			t.Errorf("Classify(%q) = %v, want %v", tc.path, got, tc.want)
		}
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
	return b
}

func TestDecodeEvent(t *testing.T) {
	want := event{End: 1e9, Latency: 12345, Ret: -5, Count: 4096, Tid: 7, FD: 9, Call: callFdatasync, Class: ClassWAL}
	got, err := decodeEvent(encodeEvent(want))
	if err != nil || got != want {
		t.Fatalf("decodeEvent = %+v, %v; want %+v", got, err, want)
	}
	if _, err := decodeEvent(make([]byte, eventSize-1)); !errors.Is(err, errShortEvent) {
		t.Errorf("short record: %v, want errShortEvent", err)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add(encodeEvent(event{End: 1, Latency: 2, Ret: 3, Count: 4, Call: callWrite, Class: ClassDB}))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEvent(b)
		if err != nil {
			return
		}
		c := newCollector(0)
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
	if n := wal.bytesPerSync.TotalCount(); n != 2 {
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
