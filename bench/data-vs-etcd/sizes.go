package main

import (
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"etcdbench/internal/diagnose/data/cost"
	"etcdbench/internal/walfile"
)

// sizesOf reads a stopped member's sizes from its data dir: the db's
// file and in-use size and its key bucket's revisions (bbolt, read-only),
// the WAL's records (walfile); keys is what the fill wrote (0: half the
// revisions, as the fill writes).
func sizesOf(dataDir string, keys int64) (cost.Sizes, error) {
	var s cost.Sizes
	path := filepath.Join(dataDir, "member", "snap", "db")
	st, err := os.Stat(path)
	if err != nil {
		return s, err
	}
	s.DBBytes, s.Keys = st.Size(), keys
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		return s, fmt.Errorf("opening %s: %w", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			return fmt.Errorf("%s has no key bucket", path)
		}
		s.Revisions = int64(b.Stats().KeyN)
		if s.Keys == 0 {
			s.Keys = max(s.Revisions/2, 1)
		}
		return nil
	})
	if err != nil {
		return s, err
	}
	s.InUseBytes = s.DBBytes - int64(db.Stats().FreePageN)*int64(db.Info().PageSize)
	p, err := walfile.ProfileDir(filepath.Join(dataDir, "member", "wal"))
	if err != nil {
		return s, err
	}
	s.WALEntries = p.Entries
	for _, seg := range p.Segments {
		s.WALBytes += seg.Used
	}
	return s, nil
}
