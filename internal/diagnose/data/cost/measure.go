package cost

import (
	"context"
	"os"
	"path/filepath"
)

// measure runs every probe in work, sized by s within l.
func measure(ctx context.Context, work string, s Sizes, l Limits) (measured, error) {
	var m measured
	size := l.probeBytes(s.DBBytes)
	read, write, err := diskBandwidths(ctx, work, size)
	if err != nil {
		return m, err
	}
	m.ReadBW, m.WriteBW = read, write
	m.ReadBytes, m.WriteBytes = float64(size), float64(size)

	revB := s.revisionBytes()
	revs := max(min(s.Revisions, l.DBMaxRevisions, l.DBMaxBytes/revB), 1000)
	keys := revs
	if s.Revisions > 0 && s.Keys > 0 {
		keys = max(revs*min(s.Keys, s.Revisions)/s.Revisions, 1)
	}
	bdir := filepath.Join(work, "backend")
	if err := os.Mkdir(bdir, 0o700); err != nil {
		return m, err
	}
	bp, err := probeBackend(ctx, bdir, revs, revB, keys)
	if err != nil {
		return m, err
	}
	m.RestoreRevs, m.DefragRevs, m.ProbeRevB = bp.revs, bp.revs, bp.revBytes
	m.RestorePerRev = bp.restore.Seconds() / float64(bp.revs)
	m.ProbeDBBytes = bp.dbBytes
	if m.PopulateBW, err = populateRate(work, size); err != nil {
		return m, err
	}
	m.PopulateBytes = size
	// A defrag writes the in-use pages: it scales with them.
	m.DefragPerByte = bp.defrag.Seconds() / float64(max(bp.dbBytes, 1))

	entB := s.entryBytes()
	ents := max(min(max(s.WALEntries, s.WALDir.Entries), l.WALMaxEntries, l.WALMaxBytes/entB), 1000)
	wp, err := probeWAL(ctx, work, ents, entB)
	if err != nil {
		return m, err
	}
	m.WALPerEntry, m.WALProbeEntries = wp.readAll.Seconds()/float64(ents), ents
	m.WALScanPerEntry = wp.scan.Seconds() / float64(ents)

	mp, err := probeMember(ctx, filepath.Join(work, "member"), max(l.Starts, 1), max(l.Sends, 1), min(max(s.DBBytes, payloadPut), l.SnapshotMaxBytes), l.StartTimeout)
	if err != nil {
		return m, err
	}
	m.StartSeconds, m.Starts = mp.start.Seconds(), mp.starts
	m.SendBW, m.SendBytes, m.Sends = mp.sendRate, float64(mp.snapBytes), mp.sends
	m.ReceiveSeconds, m.SendSeconds = mp.receive.Seconds(), mp.send.Seconds()
	return m, nil
}
