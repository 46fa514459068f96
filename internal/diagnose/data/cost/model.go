package cost

import (
	"fmt"
	"time"

	"etcdbench/internal/units"
)

// Limits bound the probes so that Predict is decided in seconds: each
// probe is the data's own size up to its cap, never below its floor (a
// probe too small is all fixed cost).
type Limits struct {
	DiskMin, DiskMax int64         // bytes the disk workloads read and write
	DBMaxBytes       int64         // bytes of the synthetic db (restore, defrag)
	DBMaxRevisions   int64         // revisions in it
	WALMaxBytes      int64         // bytes of the synthetic WAL
	WALMaxEntries    int64         // entries in it
	SnapshotMaxBytes int64         // bytes put into the probe member before its snapshot is sent
	Starts           int           // starts of the empty member (the median counts)
	Sends            int           // snapshots sent to a new member (the median counts)
	StartTimeout     time.Duration // bound on the empty member's start
}

// DefaultLimits are the probes' bounds: on a disk that reads 100 MB/s
// the probes take some ten seconds.
func DefaultLimits() Limits {
	return Limits{
		DiskMin: 16 << 20, DiskMax: 256 << 20,
		DBMaxBytes: 256 << 20, DBMaxRevisions: 500_000,
		WALMaxBytes: 32 << 20, WALMaxEntries: 100_000,
		SnapshotMaxBytes: 64 << 20, Starts: 3, Sends: 3, StartTimeout: time.Minute,
	}
}

// measured is what the probes found, typed; predict turns it into the
// three predictions and the words of where each comes from.
type measured struct {
	ReadBW, ReadBytes     float64 // recovery's sequential read, B/s, over bytes
	WriteBW, WriteBytes   float64 // snapshot's durable write, B/s, over bytes
	SendBW, SendBytes     float64 // etcd's snapshot sent to a new member (the leader's metric), B/s, over the db's bytes
	Sends                 int
	SendSeconds           float64 // the send's median, by the leader's metric
	ReceiveSeconds        float64 // the receive's median, by the new member's
	StartSeconds          float64 // an empty single member's start to ready (median), its election wait taken out
	Starts                int
	RestorePerRev         float64 // s per revision: bbolt open + mvcc restore, warm
	PopulateBW            float64 // B/s: a cold file mapped with MAP_POPULATE, as bbolt opens the db (0: not measured)
	PopulateBytes         int64
	ProbeDBBytes          int64
	RestoreRevs           int64   // revisions the restore probe had
	DefragPerByte         float64 // s per byte of the probe db, this disk's fsyncs included
	DefragRevs, ProbeRevB int64   // revisions the defrag probe had, of this mean size
	WALPerEntry           float64 // s per entry: etcd's WAL read back and decoded (ReadAll), warm
	WALScanPerEntry       float64 // s per entry: etcd's scan of the WAL for snapshots, warm (0: as WALPerEntry)
	WALProbeEntries       int64
}

// predict applies the model (see the package doc) to s.
func (m measured) predict(s Sizes) Predicted {
	// bbolt's open reads the db through the page cache with
	// MAP_POPULATE, at another rate than disk recovery's O_DIRECT reads:
	// a cold file mapped so gives it; recovery's is the fallback.
	dbBW, dbWords := m.ReadBW, fmt.Sprintf("the sequential read's %s/s over %s (disk recovery, cold cache)", rate(m.ReadBW), units.FormatBytes(int64(m.ReadBytes)))
	if m.PopulateBW > 0 {
		dbBW = m.PopulateBW
		dbWords = fmt.Sprintf("%s/s, a cold %s file mapped with MAP_POPULATE as bbolt opens it (disk recovery reads %s/s with O_DIRECT)", rate(m.PopulateBW), units.FormatBytes(m.PopulateBytes), rate(m.ReadBW))
	}
	readDB := float64(s.DBBytes) / dbBW
	restores, restoreWords := 1.0, ""
	if s.RestoresTwice {
		restores, restoreWords = 2, " twice (etcd 3.4 with a snapshot)"
	}
	restore := restores * float64(s.Revisions) * m.RestorePerRev
	// The first pass (the scan for valid snapshots) reads every segment
	// from the disk and decodes its records, not their entries; the
	// replay finds its segments in the page cache and decodes every
	// entry from the start of the one that holds the snapshot.
	since := WAL{Bytes: s.WALBytes, Entries: s.WALEntries}
	replay := s.WALReplay
	if replay.Entries < since.Entries {
		replay = since
	}
	dir := s.WALDir
	if dir.Entries < replay.Entries {
		dir = replay
	}
	scan := m.WALScanPerEntry
	if scan <= 0 {
		scan = m.WALPerEntry
	}
	readWAL := float64(dir.Bytes) / m.ReadBW
	decode := float64(dir.Entries)*scan + float64(replay.Entries)*m.WALPerEntry
	election := electionWait
	electionWords := fmt.Sprintf(" + %.2f s of election, the mean of 1 to %d ticks of %.0f ms (etcd's defaults, %d of %d ticks fast-forwarded by a member alone)",
		electionWait, electionTicks, tickSeconds*1000, electionTicks-1, electionTicks)
	switch {
	case s.Rejoin > 0:
		election = s.Rejoin.Seconds() / 2
		electionWords = fmt.Sprintf(" + %.0f ms for the leader's next heartbeat (half the %v interval on average: it rejoins a cluster that has a leader, no election of its own)", election*1000, s.Rejoin)
	case s.FullElection:
		election += fullElectionExtra
		electionWords += fmt.Sprintf(" + %.1f s of election ticks it cannot fast-forward (no snapshot tells it it is alone)", fullElectionExtra)
	}
	defrag := float64(s.InUseBytes) * m.DefragPerByte
	send := float64(s.DBBytes) / m.SendBW
	write := float64(s.DBBytes) / m.WriteBW
	return Predicted{
		Restart: Prediction{
			Seconds: m.StartSeconds + election + readDB + restore + readWAL + decode,
			From: fmt.Sprintf("start %.2f s (an empty member, median of %d, its election at %v ticks taken out) + db %s at %s + %d revisions at %.2f µs each%s (etcd's bbolt open and mvcc restore, probed on %d) + WAL %s read, its %d entries scanned for snapshots at %.2f µs each and %d decoded again at %.2f µs each (from the segment holding the last snapshot: %d since it) (etcd's WAL read back, probed on %d)%s",
				m.StartSeconds, m.Starts, probeTick, units.FormatBytes(s.DBBytes), dbWords,
				s.Revisions, m.RestorePerRev*1e6, restoreWords, m.RestoreRevs, units.FormatBytes(dir.Bytes), dir.Entries, scan*1e6, replay.Entries, m.WALPerEntry*1e6, since.Entries, m.WALProbeEntries, electionWords),
		},
		Defrag: Prediction{
			Seconds: defrag,
			From: fmt.Sprintf("in use %s at etcd's backend defrag's %s/s on this disk (median of %d defrags of a %s probe db of %d revisions taking %d bytes each, committed and fsynced every 10,000 keys)",
				units.FormatBytes(s.InUseBytes), rate(1/m.DefragPerByte), defrags, units.FormatBytes(m.ProbeDBBytes), m.DefragRevs, m.ProbeDBBytes/max(m.DefragRevs, 1)),
		},
		SnapshotSend: Prediction{
			Seconds: max(send, write),
			From: fmt.Sprintf("db %s at etcd's snapshot send's %s/s (a member's %s db sent to a new member on this disk, both in one process: %.2f s by the leader's etcd_network_snapshot_send_total_duration_seconds, %.2f s received, median of %d), never faster than the sequential write's %s/s until durable over %s (disk snapshot)",
				units.FormatBytes(s.DBBytes), rate(m.SendBW), units.FormatBytes(int64(m.SendBytes)), m.SendSeconds, m.ReceiveSeconds, m.Sends, rate(m.WriteBW), units.FormatBytes(int64(m.WriteBytes))),
		},
	}
}

// rate prints a bandwidth's bytes.
func rate(bw float64) string { return units.FormatBytes(int64(bw)) }
