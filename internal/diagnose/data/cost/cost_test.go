package cost

import (
	"context"
	"errors"
	"etcdbench/internal/etcdcluster"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// small keeps the probes to a few MiB so the test takes seconds.
func small() Limits {
	return Limits{DiskMin: 4 << 20, DiskMax: 8 << 20, DBMaxBytes: 4 << 20, DBMaxRevisions: 20_000,
		WALMaxBytes: 2 << 20, WALMaxEntries: 5_000, SnapshotMaxBytes: 2 << 20, Starts: 1, Sends: 1, StartTimeout: time.Minute}
}

func TestPredictOnADir(t *testing.T) {
	dir := t.TempDir()
	s := Sizes{DBBytes: 64 << 20, InUseBytes: 48 << 20, Keys: 20_000, Revisions: 60_000, WALBytes: 8 << 20, WALEntries: 10_000}
	p, err := PredictWith(context.Background(), dir, s, small())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		p     Prediction
		probe string
	}{
		{"restart", p.Restart, "disk recovery"},
		{"defrag", p.Defrag, "etcd's backend defrag"},
		{"snapshot", p.SnapshotSend, "etcd_network_snapshot_send_total_duration_seconds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !(c.p.Seconds > 0) {
				t.Errorf("%s: %v s, want > 0", c.name, c.p.Seconds)
			}
			if !strings.Contains(c.p.From, c.probe) {
				t.Errorf("%s comes from %q, which does not name %q", c.name, c.p.From, c.probe)
			}
		})
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) != 0 {
		t.Errorf("Predict left %v in %s (%v)", left, dir, err)
	}
}

func TestPredictionsGrowWithSize(t *testing.T) {
	m := measured{ReadBW: 100e6, WriteBW: 80e6, SendBW: 40e6, Starts: 3, StartSeconds: 0.5, RestorePerRev: 2e-6,
		DefragPerByte: 1e-8, WALPerEntry: 1e-6, ReadBytes: 1e8, WriteBytes: 1e8}
	base := Sizes{DBBytes: 100 << 20, InUseBytes: 80 << 20, Keys: 10_000, Revisions: 100_000, WALBytes: 10 << 20, WALEntries: 10_000}
	grow := map[string]func(Sizes) Sizes{
		"db":        func(s Sizes) Sizes { s.DBBytes *= 10; s.InUseBytes *= 10; return s },
		"revisions": func(s Sizes) Sizes { s.Revisions *= 10; return s },
		"wal":       func(s Sizes) Sizes { s.WALBytes *= 10; s.WALEntries *= 10; return s },
	}
	for name, g := range grow {
		t.Run(name, func(t *testing.T) {
			a, b := m.predict(base), m.predict(g(base))
			if b.Restart.Seconds <= a.Restart.Seconds {
				t.Errorf("restart did not grow: %v -> %v", a.Restart.Seconds, b.Restart.Seconds)
			}
			if b.Defrag.Seconds < a.Defrag.Seconds || b.SnapshotSend.Seconds < a.SnapshotSend.Seconds {
				t.Errorf("a prediction shrank: %+v -> %+v", a, b)
			}
		})
	}
	a, b := m.predict(base), m.predict(grow["db"](grow["revisions"](base)))
	if b.Defrag.Seconds <= a.Defrag.Seconds || b.SnapshotSend.Seconds <= a.SnapshotSend.Seconds {
		t.Errorf("defrag or snapshot did not grow with the db: %+v -> %+v", a, b)
	}
}

// A member that rejoins a cluster with a leader waits for its next
// heartbeat, not for an election of its own.
func TestPredictRejoin(t *testing.T) {
	m := measured{ReadBW: 100e6, WriteBW: 80e6, SendBW: 40e6, Starts: 3, StartSeconds: 0.5, RestorePerRev: 2e-6,
		DefragPerByte: 1e-8, WALPerEntry: 1e-6, ReadBytes: 1e8, WriteBytes: 1e8}
	alone := Sizes{DBBytes: 100 << 20, InUseBytes: 80 << 20, Keys: 10_000, Revisions: 100_000, WALBytes: 10 << 20, WALEntries: 10_000}
	rejoin := alone
	rejoin.Rejoin = 50 * time.Millisecond
	a, r := m.predict(alone).Restart, m.predict(rejoin).Restart
	if d := a.Seconds - r.Seconds; math.Abs(d-(electionWait-0.025)) > 1e-9 || !strings.Contains(r.From, "next heartbeat") {
		t.Errorf("alone %v s, rejoining %v s (%s): want the election's %v s less a half heartbeat", a.Seconds, r.Seconds, r.From, electionWait)
	}
}

func TestPredictRefuses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ok := Sizes{DBBytes: 1 << 20, InUseBytes: 1 << 20, Keys: 10, Revisions: 10}
	for _, c := range []struct {
		name string
		dir  string
		s    Sizes
		want error
	}{
		{"missing", filepath.Join(t.TempDir(), "none"), ok, ErrBadDir},
		{"a file", file, ok, ErrBadDir},
		{"negative", t.TempDir(), Sizes{DBBytes: -1}, ErrBadSizes},
		{"more in use than the file", t.TempDir(), Sizes{DBBytes: 1, InUseBytes: 2}, ErrBadSizes},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := PredictWith(context.Background(), c.dir, c.s, small())
			if !errors.Is(err, c.want) {
				t.Errorf("PredictWith(%s, %+v) = %v, want %v", c.dir, c.s, err, c.want)
			}
		})
	}
}

func TestWhatTheDataDirSays(t *testing.T) {
	for _, c := range []struct {
		name                  string
		snap, term, versioned bool
		full, twice           bool
	}{
		{name: "3.4 before its first snapshot", full: true},
		{name: "3.4 with a snapshot", snap: true, twice: true},
		{name: "3.5 before its first snapshot", term: true, full: true},
		{name: "3.5 with a snapshot", snap: true, term: true},
		{name: "3.6 before its first snapshot", term: true, versioned: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "db")
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket([]byte("meta"))
				if err == nil && c.versioned {
					err = b.Put([]byte("storageVersion"), []byte("3.6.0"))
				}
				if err == nil && c.term {
					err = b.Put([]byte("term"), []byte{0, 0, 0, 0, 0, 0, 0, 2})
				}
				return err
			})
			if cerr := db.Close(); err != nil || cerr != nil {
				t.Fatal(err, cerr)
			}
			if c.snap {
				if err := os.WriteFile(filepath.Join(dir, "0000000000000002-0000000000002710.snap"), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			full, err := WaitsFullElection(path)
			if err != nil || full != c.full {
				t.Errorf("WaitsFullElection = %v, %v; want %v", full, err, c.full)
			}
			twice, err := RestoresTwice(path)
			if err != nil || twice != c.twice {
				t.Errorf("RestoresTwice = %v, %v; want %v", twice, err, c.twice)
			}
		})
	}
	if _, err := WaitsFullElection(filepath.Join(t.TempDir(), "db")); err == nil {
		t.Error("WaitsFullElection of a missing db gave no error")
	}
}

// TestSendProbeTimesEachLearner holds each send of the probe to its own
// learner: every learner receives from the same leader, whose ID is the
// receive metric's one label, so without what earlier learners counted
// subtracted the second would count two receives and their sum.
func TestSendProbeTimesEachLearner(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: dir, Members: 1, SnapshotCount: probeSnapshotCount})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := memberProbe{sends: 2}
	if err := sendProbe(ctx, c, 2<<20, time.Minute, &p); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		s, r, err := sendOnce(ctx, c, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if s.Count != 1 || r.Count != 1 || !(s.Seconds > 0) || !(r.Seconds > 0) || !(r.Fsync > 0) || r.Fsync > r.Seconds {
			t.Errorf("learner %d: sent %+v, received %+v; want one each, the fsync inside the receive", i+3, s, r)
		}
	}
}

// TestWALPasses holds the restart's WAL terms to etcd's two passes: the
// scan of every entry at the scan's cost, and the replay's decode of
// every entry from the segment holding the snapshot at ReadAll's.
func TestWALPasses(t *testing.T) {
	m := measured{ReadBW: 100e6, WriteBW: 80e6, SendBW: 40e6, Starts: 3, RestorePerRev: 2e-6,
		DefragPerByte: 1e-8, WALPerEntry: 4e-6, WALScanPerEntry: 3e-6}
	base := Sizes{WALBytes: 1 << 20, WALEntries: 1000, WALDir: WAL{Bytes: 50 << 20, Entries: 50_000}}
	same := func(s Sizes) Sizes { return s }
	for _, c := range []struct {
		name string
		s    func(Sizes) Sizes
		m    func(measured) measured
		want float64 // seconds more than base
	}{
		{"the replay's segment", func(s Sizes) Sizes { s.WALReplay = WAL{Bytes: 5 << 20, Entries: 5000}; return s }, nil, 4000 * 4e-6},
		{"a replay smaller than since counts since", func(s Sizes) Sizes { s.WALReplay = WAL{Entries: 10}; return s }, nil, 0},
		{"the scan without its probe costs ReadAll's", same, func(m measured) measured { m.WALScanPerEntry = 0; return m }, 50_000 * (4e-6 - 3e-6)},
	} {
		t.Run(c.name, func(t *testing.T) {
			mm := m
			if c.m != nil {
				mm = c.m(m)
			}
			got := mm.predict(c.s(base)).Restart.Seconds - m.predict(base).Restart.Seconds
			if d := got - c.want; d > 1e-9 || d < -1e-9 {
				t.Errorf("restart grew by %v s, want %v s", got, c.want)
			}
		})
	}
}
