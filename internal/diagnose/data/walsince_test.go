package data

import (
	"fmt"
	"path/filepath"
	"testing"

	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
)

// TestWALSince writes a WAL of several segments with etcd's own wal
// package, a snapshot record in a later one, and holds walSince's counts
// to what etcd reads: every entry (the scan), those after the snapshot
// (replayed), and those ReadAll decodes, from the first index of the
// segment wal.Open selects for the snapshot (the last whose name's index
// is not past it) to the end.
func TestWALSince(t *testing.T) {
	old := wal.SegmentSizeBytes
	wal.SegmentSizeBytes = 64 << 10
	t.Cleanup(func() { wal.SegmentSizeBytes = old })
	dir := filepath.Join(t.TempDir(), "wal")
	w, err := wal.Create(zap.NewNop(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	const entries, snapAt = 600, 450
	data := make([]byte, 1000)
	for i := uint64(1); i <= entries; i++ {
		e := &raftpb.Entry{Term: new(uint64(1)), Index: new(i), Type: raftpb.EntryNormal.Enum(), Data: data}
		if err := w.Save(&raftpb.HardState{Term: new(uint64(1)), Commit: new(i)}, []*raftpb.Entry{e}); err != nil {
			t.Fatal(err)
		}
		if i == snapAt {
			if err := w.SaveSnapshot(&walpb.Snapshot{Index: new(i), Term: new(uint64(1)), ConfState: &raftpb.ConfState{Voters: []uint64{1}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil || len(names) < 4 {
		t.Fatalf("%d segments (%v), want several", len(names), err)
	}
	var first uint64 = 1 // the first index of the segment wal.Open selects
	for _, n := range names {
		var seq, idx uint64
		if _, err := fmt.Sscanf(filepath.Base(n), "%016x-%016x.wal", &seq, &idx); err != nil {
			t.Fatal(err)
		}
		if idx <= snapAt {
			first = max(idx, 1)
		}
	}
	all, since, replay, err := walSince(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"all", all.Entries, entries},
		{"since the snapshot", since.Entries, entries - snapAt},
		{"replay decodes", replay.Entries, int64(entries - first + 1)},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d entries, want %d", c.name, c.got, c.want)
		}
	}
	if !(replay.Bytes > since.Bytes && all.Bytes > replay.Bytes) {
		t.Errorf("bytes: all %d, replay %d, since %d; want all > replay > since", all.Bytes, replay.Bytes, since.Bytes)
	}
}
