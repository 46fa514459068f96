package walfile

import (
	"fmt"
	"math"
	"sort"
)

// Sizes is an exact distribution of sizes (bytes or counts). It keeps
// one counter per distinct value: WAL sizes repeat, and distinct sizes
// whose sum fits in a few segments are at most a few thousand.
type Sizes struct {
	counts map[int64]int64
	n, sum int64
	max    int64
}

// Add records one value.
func (s *Sizes) Add(v int64) {
	if s.counts == nil {
		s.counts = make(map[int64]int64)
	}
	s.counts[v]++
	s.n++
	s.sum += v
	s.max = max(s.max, v)
}

// Counts returns each distinct value recorded and how many times it was:
// the whole distribution, a copy.
func (s *Sizes) Counts() map[int64]int64 {
	m := make(map[int64]int64, len(s.counts))
	for k, v := range s.counts {
		m[k] = v
	}
	return m
}

// Count is the number of values recorded.
func (s *Sizes) Count() int64 { return s.n }

// Sum is the total of the values recorded.
func (s *Sizes) Sum() int64 { return s.sum }

// Max is the largest value recorded, 0 when empty.
func (s *Sizes) Max() int64 { return s.max }

// Mean is the average value, 0 when empty.
func (s *Sizes) Mean() float64 {
	if s.n == 0 {
		return 0
	}
	return float64(s.sum) / float64(s.n)
}

// Quantile returns the nearest-rank q-quantile (0 < q <= 1): the smallest
// recorded value with at least q of the values at or below it; 0 when empty.
func (s *Sizes) Quantile(q float64) int64 {
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

// SegmentInfo is what one segment file held.
type SegmentInfo struct {
	Name    string
	Size    int64 // bytes in the file (preallocated ones included)
	Used    int64 // bytes of good frames from the start
	Records int64
	Tail    Tail
}

// Profile is the write pattern decoded from a WAL's segments: the sizes
// of what etcd wrote and how it grouped writes between fdatasyncs.
type Profile struct {
	Segments []SegmentInfo

	Records, Entries, States, Snapshots int64

	RecordBytes      Sizes // protobuf record lengths, all types
	FrameBytes       Sizes // bytes on disk per record: length word + record + padding
	EntryFrameBytes  Sizes // bytes on disk per entry record
	EntryDataBytes   Sizes // the entries' own payloads (serialized requests)
	EntriesPerSave   Sizes // entries between consecutive state records
	BytesPerSync     Sizes // frame bytes from one inferred fdatasync to the next
	BytesPerStateRec Sizes // frame bytes between consecutive state records

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
func (p *Profile) AddSegment(name string, b []byte) {
	info := SegmentInfo{Name: name, Size: int64(len(b))}
	info.Tail = DecodeSegment(b, func(r Record) {
		info.Records++
		p.add(r)
	})
	info.Used = info.Tail.Offset
	// etcd syncs a segment before it cuts to the next one (wal.cut), so
	// whatever was pending at its end was one batch.
	if info.Tail.End == EndEOF && p.sinceSync > 0 {
		p.BytesPerSync.Add(p.sinceSync)
		p.sinceSync = 0
	}
	p.Segments = append(p.Segments, info)
}

// add follows etcd's WAL.Save: the entries of one Save, then its hard
// state; then an fdatasync when raft.MustSync holds (there were entries, or
// term or vote changed). SaveSnapshot and segment creation (crc, metadata,
// state or snapshot) sync too.
func (p *Profile) add(r Record) {
	size := r.Frame.Size()
	p.Records++
	p.RecordBytes.Add(r.Frame.RecBytes)
	p.FrameBytes.Add(size)
	p.sinceSync += size
	p.sinceState += size
	sync := false
	switch r.Type {
	case EntryType:
		p.Entries++
		p.entriesSinceState++
		p.EntryFrameBytes.Add(size)
		p.EntryDataBytes.Add(int64(r.EntryDataBytes))
	case StateType:
		p.States++
		p.EntriesPerSave.Add(p.entriesSinceState)
		p.BytesPerStateRec.Add(p.sinceState)
		changed := !p.haveState || r.Term != p.term || r.Vote != p.vote
		sync = p.entriesSinceState > 0 || changed || p.lastType == MetadataType
		p.haveState, p.term, p.vote = true, r.Term, r.Vote
		p.entriesSinceState, p.sinceState = 0, 0
	case SnapshotType:
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
func (p *Profile) Syncs() int64 { return p.BytesPerSync.Count() }

// RecommendBS is the --bs for 'etcdbench disk wal' that matches a
// median of bytes per write+fdatasync: rounded to two significant digits,
// since what a disk's sync latency depends on is the number of 4 KiB pages
// a write touches, not the last byte, and a round figure is easier to
// compare between runs. It is at least 8, the smallest WAL frame.
func RecommendBS(median int64) int64 {
	if median <= 8 {
		return 8
	}
	scale := int64(1)
	for median/scale >= 100 {
		scale *= 10
	}
	return (median + scale/2) / scale * scale
}

// tailNote explains a segment's end in a sentence, or "" when it is the
// normal end: a cut segment ends at its last frame, and the segment being
// written (the last one) at its preallocated zeros.
func tailNote(s SegmentInfo, last bool) string {
	t := s.Tail
	switch t.End {
	case EndEOF:
		return ""
	case EndZero:
		if t.TrailingGarbage {
			return fmt.Sprintf("%s: non-zero bytes after the end of the records at offset %d (a garbage tail; etcd stops reading at the zero length word too)", s.Name, t.Offset)
		}
		if !last {
			return fmt.Sprintf("%s: the records end at offset %d before the end of the file; etcd truncates a segment when it cuts to the next, so this one was not closed normally", s.Name, t.Offset)
		}
		return ""
	case EndTorn:
		if last {
			return fmt.Sprintf("%s: torn tail at offset %d, decoding stopped there: %s (normal after a crash, or when a live etcd is writing the segment as it is read)", s.Name, t.Offset, t.Detail)
		}
		return fmt.Sprintf("%s: torn record at offset %d in a segment that is not the last, decoding of this segment stopped there: %s", s.Name, t.Offset, t.Detail)
	}
	return fmt.Sprintf("%s: corrupt record at offset %d, decoding of this segment stopped there: %s", s.Name, t.Offset, t.Detail)
}
