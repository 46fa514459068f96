package diagnose

import (
	"fmt"
	"math"
	"sort"
)

// WALSizes is an exact distribution of sizes (bytes or counts). It keeps
// one counter per distinct value: WAL sizes repeat, and distinct sizes
// whose sum fits in a few segments are at most a few thousand.
type WALSizes struct {
	counts map[int64]int64
	n, sum int64
	max    int64
}

// Add records one value.
func (s *WALSizes) Add(v int64) {
	if s.counts == nil {
		s.counts = make(map[int64]int64)
	}
	s.counts[v]++
	s.n++
	s.sum += v
	s.max = max(s.max, v)
}

// Count is the number of values recorded.
func (s *WALSizes) Count() int64 { return s.n }

// Sum is the total of the values recorded.
func (s *WALSizes) Sum() int64 { return s.sum }

// Max is the largest value recorded, 0 when empty.
func (s *WALSizes) Max() int64 { return s.max }

// Mean is the average value, 0 when empty.
func (s *WALSizes) Mean() float64 {
	if s.n == 0 {
		return 0
	}
	return float64(s.sum) / float64(s.n)
}

// Quantile returns the nearest-rank q-quantile (0 < q <= 1): the smallest
// recorded value with at least q of the values at or below it; 0 when empty.
func (s *WALSizes) Quantile(q float64) int64 {
	if s.n == 0 {
		return 0
	}
	keys := make([]int64, 0, len(s.counts))
	for k := range s.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	rank := int64(math.Ceil(q * float64(s.n)))
	rank = min(max(rank, 1), s.n)
	var seen int64
	for _, k := range keys {
		seen += s.counts[k]
		if seen >= rank {
			return k
		}
	}
	return keys[len(keys)-1]
}

// WALSegmentInfo is what one segment file held.
type WALSegmentInfo struct {
	Name    string
	Size    int64 // bytes in the file (preallocated ones included)
	Used    int64 // bytes of good frames from the start
	Records int64
	Tail    WALTail
}

// WALProfile is the write pattern decoded from a WAL's segments: the sizes
// of what etcd wrote and how it grouped writes between fdatasyncs.
type WALProfile struct {
	Segments []WALSegmentInfo

	Records, Entries, States, Snapshots int64

	RecordBytes      WALSizes // protobuf record lengths, all types
	FrameBytes       WALSizes // bytes on disk per record: length word + record + padding
	EntryFrameBytes  WALSizes // bytes on disk per entry record
	EntryDataBytes   WALSizes // the entries' own payloads (serialized requests)
	EntriesPerSave   WALSizes // entries between consecutive state records
	BytesPerSync     WALSizes // frame bytes from one inferred fdatasync to the next
	BytesPerStateRec WALSizes // frame bytes between consecutive state records

	// walk state, carried across segments in order
	haveState         bool
	term, vote        uint64
	entriesSinceState int64
	sinceSync         int64
	sinceState        int64
	lastType          int64
}

// AddSegment decodes one segment file's contents (segments must be added
// in order, oldest first) and adds its records to the profile.
func (p *WALProfile) AddSegment(name string, b []byte) {
	info := WALSegmentInfo{Name: name, Size: int64(len(b))}
	info.Tail = WALDecodeSegment(b, func(r WALRecord) {
		info.Records++
		p.add(r)
	})
	info.Used = info.Tail.Offset
	// etcd syncs a segment before it cuts to the next one (wal.cut), so
	// whatever was pending at its end was one batch.
	if info.Tail.End == WALEndEOF && p.sinceSync > 0 {
		p.BytesPerSync.Add(p.sinceSync)
		p.sinceSync = 0
	}
	p.Segments = append(p.Segments, info)
}

// add follows etcd's WAL.Save: the entries of one Save, then its hard
// state; then an fdatasync when raft.MustSync holds (there were entries, or
// term or vote changed). SaveSnapshot and segment creation (crc, metadata,
// state or snapshot) sync too.
func (p *WALProfile) add(r WALRecord) {
	size := r.Frame.Size()
	p.Records++
	p.RecordBytes.Add(r.Frame.RecBytes)
	p.FrameBytes.Add(size)
	p.sinceSync += size
	p.sinceState += size
	sync := false
	switch r.Type {
	case WALEntryType:
		p.Entries++
		p.entriesSinceState++
		p.EntryFrameBytes.Add(size)
		p.EntryDataBytes.Add(int64(r.EntryDataBytes))
	case WALStateType:
		p.States++
		p.EntriesPerSave.Add(p.entriesSinceState)
		p.BytesPerStateRec.Add(p.sinceState)
		changed := !p.haveState || r.Term != p.term || r.Vote != p.vote
		sync = p.entriesSinceState > 0 || changed || p.lastType == WALMetadataType
		p.haveState, p.term, p.vote = true, r.Term, r.Vote
		p.entriesSinceState, p.sinceState = 0, 0
	case WALSnapshotType:
		p.Snapshots++
		sync = true
	}
	if sync {
		p.BytesPerSync.Add(p.sinceSync)
		p.sinceSync = 0
	}
	p.lastType = r.Type
}

// Syncs is the number of fdatasyncs inferred.
func (p *WALProfile) Syncs() int64 { return p.BytesPerSync.Count() }

// WALRecommendBS is the --bs for 'etcdbench disk wal' that matches a
// median of bytes per write+fdatasync: rounded to two significant digits,
// since what a disk's sync latency depends on is the number of 4 KiB pages
// a write touches, not the last byte, and a round figure is easier to
// compare between runs. It is at least 8, the smallest WAL frame.
func WALRecommendBS(median int64) int64 {
	if median <= 8 {
		return 8
	}
	scale := int64(1)
	for median/scale >= 100 {
		scale *= 10
	}
	return (median + scale/2) / scale * scale
}

// walTailNote explains a segment's end in a sentence, or "" when it is the
// normal end: a cut segment ends at its last frame, and the segment being
// written (the last one) at its preallocated zeros.
func walTailNote(s WALSegmentInfo, last bool) string {
	t := s.Tail
	switch t.End {
	case WALEndEOF:
		return ""
	case WALEndZero:
		if t.TrailingGarbage {
			return fmt.Sprintf("%s: non-zero bytes after the end of the records at offset %d (a garbage tail; etcd stops reading at the zero length word too)", s.Name, t.Offset)
		}
		if !last {
			return fmt.Sprintf("%s: the records end at offset %d before the end of the file; etcd truncates a segment when it cuts to the next, so this one was not closed normally", s.Name, t.Offset)
		}
		return ""
	case WALEndTorn:
		if last {
			return fmt.Sprintf("%s: torn tail at offset %d, decoding stopped there: %s (normal after a crash, or when a live etcd is writing the segment as it is read)", s.Name, t.Offset, t.Detail)
		}
		return fmt.Sprintf("%s: torn record at offset %d in a segment that is not the last, decoding of this segment stopped there: %s", s.Name, t.Offset, t.Detail)
	}
	return fmt.Sprintf("%s: corrupt record at offset %d, decoding of this segment stopped there: %s", s.Name, t.Offset, t.Detail)
}
