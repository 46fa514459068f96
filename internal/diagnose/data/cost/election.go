package cost

import (
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// Election timing of etcd's defaults (--heartbeat-interval 100 ms,
// --election-timeout 1000 ms): a member that knows it is the only voter
// advances its election clock by election ticks - 1 as it starts
// (etcdserver's adjustTicks), so it campaigns after 1 to 10 ticks; one
// that does not know waits its randomized timeout, 10 to 19 ticks. The
// start probe measures the first; the second waits this much longer on
// average.
const (
	tickSeconds   = 0.1
	electionTicks = 10
	// fullElectionExtra is the ticks fast-forwarding saves.
	fullElectionExtra = (electionTicks - 1) * tickSeconds
)

// WaitsFullElection says whether a single member restarted on the db at
// dbPath (a data dir's member/snap/db) waits a whole election timeout: etcd before 3.6 learns its membership
// at start from its last snapshot (member/snap/*.snap), and has none
// (*.snap beside the db) until --snapshot-count entries (100,000 by
// default) were applied, so
// it does not fast-forward; from 3.6, whose db carries a storage version
// (meta bucket, "storageVersion"), membership is read from the db. The
// db is opened read-only.
func WaitsFullElection(path string) (bool, error) {
	snaps, err := filepath.Glob(filepath.Join(filepath.Dir(path), "*.snap"))
	if err != nil {
		return false, err
	}
	if len(snaps) > 0 {
		return false, nil
	}
	if _, err := os.Stat(path); err != nil {
		return false, err
	}
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		return false, fmt.Errorf("cost: opening %s read-only: %w", path, err)
	}
	defer db.Close()
	versioned := false
	err = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("meta")); b != nil {
			versioned = b.Get([]byte("storageVersion")) != nil
		}
		return nil
	})
	return !versioned, err
}
