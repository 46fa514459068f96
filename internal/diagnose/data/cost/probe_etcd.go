package cost

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.etcd.io/etcd/pkg/v3/traceutil"
	"go.etcd.io/etcd/server/v3/lease"
	"go.etcd.io/etcd/server/v3/storage/backend"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
)

// keyOverhead is what a revision's bbolt element holds beyond its
// value: the 17-byte revision key, bbolt's 16-byte element header, the
// KeyValue's own key (probeKey's 40 bytes) and its revisions and field
// tags.
const keyOverhead = 100

// probeValueBytes is the value size that gives the probe's revisions
// the data's footprint in the db: a revision of revBytes in use (its
// element plus its share of the page's slack) is an element of about 0.9
// of it, since bbolt fills pages written in sequence to 90 % and a page
// holds whole elements.
func probeValueBytes(revBytes int64) int64 {
	return max(revBytes*9/10-keyOverhead, 8)
}

// probeKey is the synthetic data's key i, shaped as kube-apiserver's.
func probeKey(i int64) []byte {
	return fmt.Appendf(nil, "/registry/configmaps/probe/object-%08d", i)
}

// etcdProbe is what etcd's own code costs on this machine and disk.
type etcdProbe struct {
	revs, revBytes int64
	dbBytes        int64         // the probe db's file size
	restore        time.Duration // bbolt open + mvcc restore of revs, warm
	defrag         time.Duration // the backend's defrag of the db (median)
}

// probeBackend writes revs revisions of revBytes each over keys distinct
// keys through etcd's mvcc store into a db in dir, then times reopening
// it (bbolt's open and mvcc's restore with the pages cached) and
// defragmenting it.
func probeBackend(ctx context.Context, dir string, revs, revBytes, keys int64) (etcdProbe, error) {
	p := etcdProbe{revs: revs, revBytes: revBytes}
	lg := zap.NewNop()
	path := filepath.Join(dir, "db")
	// Random values, as objects are: a disk or filesystem that
	// compresses or skips zeros would make zeros cheaper than data.
	value := make([]byte, probeValueBytes(revBytes))
	if _, err := rand.Read(value); err != nil {
		return p, err
	}
	write := func(from, to int64) error {
		be := backend.NewDefaultBackend(lg, path)
		kv := mvcc.New(lg, be, &lease.FakeLessor{}, mvcc.StoreConfig{})
		for i := from; i < to; i++ {
			if i%10000 == 0 && ctx.Err() != nil {
				break
			}
			value[0], value[1] = byte(i), byte(i>>8)
			txn := kv.Write(traceutil.TODO())
			txn.Put(probeKey(i%keys), value, lease.NoLease)
			txn.End()
		}
		kv.Commit()
		kv.Close()
		if err := be.Close(); err != nil {
			return fmt.Errorf("cost: closing the probe db %s: %w", path, err)
		}
		return ctx.Err()
	}
	open := func() (backend.Backend, time.Duration) {
		start := time.Now()
		be := backend.NewDefaultBackend(lg, path)
		kv := mvcc.New(lg, be, &lease.FakeLessor{}, mvcc.StoreConfig{})
		took := time.Since(start)
		kv.Close()
		return be, took
	}
	if err := write(0, revs); err != nil {
		return p, err
	}
	if st, err := os.Stat(path); err == nil {
		p.dbBytes = st.Size()
	}
	be, _ := open()
	// Warm, the median of three: the CPU of bbolt's open and the restore.
	var warm []time.Duration
	for range defrags {
		be.Close()
		var d time.Duration
		be, d = open()
		warm = append(warm, d)
	}
	slices.Sort(warm)
	p.restore = warm[len(warm)/2]
	var err error
	if p.defrag, err = defragMedian(be, path); err != nil {
		return p, err
	}
	return p, os.Remove(path)
}

// defragMedian defragments be defrags times, closes it and returns the
// median time: one defrag is easily slowed by another writer's fsyncs.
func defragMedian(be backend.Backend, path string) (time.Duration, error) {
	defer be.Close()
	var took []time.Duration
	for range defrags {
		start := time.Now()
		if err := be.Defrag(); err != nil {
			return 0, fmt.Errorf("cost: defragmenting the probe db %s: %w", path, err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return took[len(took)/2], nil
}

// defrags is how many times the probe db is reopened warm and
// defragmented (the medians count).
const defrags = 3

// walProbe is what etcd's WAL code costs reading a WAL back, warm.
type walProbe struct {
	scan    time.Duration // ValidSnapshotEntries: every record decoded, entries not unmarshalled
	readAll time.Duration // Open and ReadAll: every record decoded, entries unmarshalled
}

// probeWAL writes entries raft entries of entryBytes each with etcd's
// WAL into dir and times reading them back (the files still cached) as
// a restarting member does: the scan for valid snapshots over every
// segment, then open and ReadAll.
func probeWAL(ctx context.Context, dir string, entries, entryBytes int64) (walProbe, error) {
	var p walProbe
	lg := zap.NewNop()
	wdir := filepath.Join(dir, "wal")
	w, err := wal.Create(lg, wdir, nil)
	if err != nil {
		return p, fmt.Errorf("cost: creating the probe WAL in %s: %w", wdir, err)
	}
	data := make([]byte, entryBytes)
	const batch = 1000
	ents := make([]*raftpb.Entry, 0, batch)
	for i := int64(1); i <= entries; i++ {
		ents = append(ents, &raftpb.Entry{Term: new(uint64(1)), Index: new(uint64(i)), Type: raftpb.EntryNormal.Enum(), Data: data})
		if len(ents) == batch || i == entries {
			if err := w.Save(&raftpb.HardState{Term: new(uint64(1)), Commit: new(uint64(i))}, ents); err != nil {
				w.Close()
				return p, fmt.Errorf("cost: writing the probe WAL in %s: %w", wdir, err)
			}
			ents = ents[:0]
			if ctx.Err() != nil {
				break
			}
		}
	}
	if err := w.Close(); err != nil {
		return p, err
	}
	if err := ctx.Err(); err != nil {
		return p, err
	}
	start := time.Now()
	if _, err := wal.ValidSnapshotEntries(lg, wdir); err != nil {
		return p, fmt.Errorf("cost: scanning the probe WAL in %s: %w", wdir, err)
	}
	p.scan = time.Since(start)
	start = time.Now()
	w, err = wal.Open(lg, wdir, &walpb.Snapshot{})
	if err != nil {
		return p, fmt.Errorf("cost: opening the probe WAL in %s: %w", wdir, err)
	}
	_, _, got, err := w.ReadAll()
	took := time.Since(start)
	w.Close()
	if err != nil {
		return p, fmt.Errorf("cost: reading the probe WAL in %s: %w", wdir, err)
	}
	if int64(len(got)) != entries {
		return p, fmt.Errorf("cost: the probe WAL in %s gave %d of %d entries", wdir, len(got), entries)
	}
	p.readAll = took
	return p, os.RemoveAll(wdir)
}
