package cost

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Election timing of etcd's defaults (--heartbeat-interval 100 ms,
// --election-timeout 1000 ms): a member that knows it is the only voter
// advances its election clock by election ticks - 1 as it starts
// (etcdserver's adjustTicks), so it campaigns after 1 to 10 ticks; one
// that does not know waits its randomized timeout, 10 to 19 ticks: 9
// ticks longer on average. A restart is one draw of these; the
// prediction is their mean.
const (
	tickSeconds   = 0.1
	electionTicks = 10
	// fullElectionExtra is the ticks fast-forwarding saves.
	fullElectionExtra = (electionTicks - 1) * tickSeconds
	// electionWait is a fast-forwarded member's mean wait: 1 to 10
	// ticks, each as likely (raft's randomized timeout of 10 to 19).
	electionWait = (1 + electionTicks) / 2.0 * tickSeconds
)

// The start probe's members tick every probeTick with the same number
// of ticks to an election, so that their random wait (1 to 10 ticks)
// is a tenth of etcd's default: the probe's median then measures the
// start's own work, its mean wait taken out, and the model adds
// electionWait instead of three random draws of it.
const (
	probeTick     = 10 * time.Millisecond
	probeElection = electionTicks * probeTick
	// probeElectionWait is the probe's mean wait.
	probeElectionWait = (1 + electionTicks) * probeTick / 2
)

// WaitsFullElection says whether a single member restarted on the db at
// dbPath (a data dir's member/snap/db) waits a whole election timeout:
// etcd before 3.6 learns its membership at start from its last snapshot
// (*.snap beside the db) and has none until --snapshot-count entries
// (100,000 by default) were applied, so it does not fast-forward; from
// 3.6, whose db carries a storage version (meta bucket,
// "storageVersion"), membership is read from the db. The db is opened
// read-only.
func WaitsFullElection(path string) (bool, error) {
	m, err := inspect(path)
	return !m.snapshot && !m.storageVersion, err
}

// RestoresTwice says whether a member restarted on the db at path
// restores its mvcc index twice: etcd 3.4, when it has a snapshot, builds
// a whole mvcc store only to read the backend's consistent index
// (etcdserver's recoverSnapshotBackend) before the store it serves from;
// 3.5 reads the index alone and writes the raft term into the meta
// bucket ("term"), which 3.4's db lacks.
func RestoresTwice(path string) (bool, error) {
	m, err := inspect(path)
	return m.snapshot && !m.term && !m.storageVersion, err
}

// member is what a data dir says of the etcd that wrote it.
type member struct {
	snapshot       bool // a *.snap beside the db
	term           bool // meta "term": etcd 3.5 or later
	storageVersion bool // meta "storageVersion": etcd 3.6 or later
}

// inspect reads member facts from the db at path (read-only) and the
// snapshots beside it.
func inspect(path string) (member, error) {
	var m member
	snaps, err := filepath.Glob(filepath.Join(filepath.Dir(path), "*.snap"))
	if err != nil {
		return m, err
	}
	m.snapshot = len(snaps) > 0
	if _, err := os.Stat(path); err != nil {
		return m, err
	}
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		return m, fmt.Errorf("cost: opening %s read-only: %w", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("meta")); b != nil {
			m.term = b.Get([]byte("term")) != nil
			m.storageVersion = b.Get([]byte("storageVersion")) != nil
		}
		return nil
	})
	return m, err
}
