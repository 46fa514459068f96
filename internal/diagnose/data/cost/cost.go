package cost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// Sizes are the figures of a member's data the predictions scale with.
type Sizes struct {
	DBBytes    int64 // member/snap/db's file size, free pages included
	InUseBytes int64 // the db's pages in use
	Keys       int64 // live keys
	Revisions  int64 // revisions in the key bucket (all kept since the last compaction)
	WALBytes   int64 // bytes of WAL entry records since the last snapshot
	WALEntries int64 // raft entries in the WAL since the last snapshot
	// WALDir is every entry record in member/wal's segments: a restart
	// decodes them all first (the WAL's ValidSnapshotEntries), then those
	// since the last snapshot again (ReadAll). Zero: only the replay.
	WALDir WAL
	// WALReplay is what the replay decodes (ReadAll): every entry from
	// the start of the segment that holds the last snapshot, those
	// before the snapshot skipped after decoding. Zero: WALBytes and
	// WALEntries.
	WALReplay WAL
	// FullElection says the member cannot know at its start that it is
	// alone (see WaitsFullElection), so it waits a whole randomized
	// election timeout before it leads instead of fast-forwarding.
	FullElection bool
	// RestoresTwice says the member rebuilds its index twice at start
	// (see RestoresTwice).
	RestoresTwice bool
	// Rejoin, when set, is the heartbeat interval of a cluster that has a
	// leader while the member restarts: it rejoins on the leader's next
	// heartbeat instead of waiting out an election of its own.
	Rejoin time.Duration
}

// WAL is an amount of WAL: its entry records' bytes and their count.
type WAL struct{ Bytes, Entries int64 }

// Prediction is one predicted duration and the measured figure it comes
// from, in words: "sequential read 180 MB/s over 256 MiB (disk
// recovery), ...".
type Prediction struct {
	Seconds float64
	From    string
}

// Predicted is what the data costs on the disk: the member's restart
// (start to healthy), a defragmentation (the member blocked), and sending
// a snapshot of the db (to a new member, or etcdctl snapshot save).
type Predicted struct {
	Restart, Defrag, SnapshotSend Prediction
}

// ErrBadDir is matched by Predict's error when dir is not a directory it
// can write in.
var ErrBadDir = errors.New("cost: not a writable directory")

// Predict measures the disk under dir and this machine's CPU with probes
// sized by s (see Limits) and returns the three predictions. It writes
// only inside a temporary directory in dir, removed before it returns.
func Predict(ctx context.Context, dir string, s Sizes) (Predicted, error) {
	return PredictWith(ctx, dir, s, DefaultLimits())
}

// PredictWith is Predict with the probes' sizes bounded by l.
func PredictWith(ctx context.Context, dir string, s Sizes, l Limits) (Predicted, error) {
	if err := s.validate(); err != nil {
		return Predicted{}, err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return Predicted{}, fmt.Errorf("%w: %v", ErrBadDir, err)
	}
	if !st.IsDir() {
		return Predicted{}, fmt.Errorf("%w: %s is not a directory", ErrBadDir, dir)
	}
	work, err := os.MkdirTemp(dir, ".etcdbench-cost-")
	if err != nil {
		return Predicted{}, fmt.Errorf("%w: %v", ErrBadDir, err)
	}
	defer os.RemoveAll(work)
	m, err := measure(ctx, work, s, l)
	if err != nil {
		return Predicted{}, err
	}
	return m.predict(s), nil
}

// ErrBadSizes is matched by Predict's error when the sizes cannot
// describe a db.
var ErrBadSizes = errors.New("cost: bad sizes")

func (s Sizes) validate() error {
	switch {
	case s.DBBytes < 0 || s.InUseBytes < 0 || s.Keys < 0 || s.Revisions < 0 || s.WALBytes < 0 || s.WALEntries < 0 ||
		s.WALDir.Bytes < 0 || s.WALDir.Entries < 0 || s.WALReplay.Bytes < 0 || s.WALReplay.Entries < 0:
		return fmt.Errorf("%w: a negative size in %+v", ErrBadSizes, s)
	case s.InUseBytes > s.DBBytes:
		return fmt.Errorf("%w: %d bytes in use in a %d-byte db", ErrBadSizes, s.InUseBytes, s.DBBytes)
	}
	return nil
}

// revisionBytes is the mean size of a revision in the db's pages (key,
// value and the page's share), or a small default for an empty db.
func (s Sizes) revisionBytes() int64 {
	if s.Revisions <= 0 || s.InUseBytes <= 0 {
		return 512
	}
	return max(s.InUseBytes/s.Revisions, 64)
}

// entryBytes is the mean size of a WAL entry, or a small default.
func (s Sizes) entryBytes() int64 {
	if s.WALEntries <= 0 || s.WALBytes <= 0 {
		return 512
	}
	return max(s.WALBytes/s.WALEntries, 16)
}
