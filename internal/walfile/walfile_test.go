package walfile

import (
	"bytes"
	"flag"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite golden files and fuzz seeds")

// walSave is one WAL.Save of the plan a test writes.
type walSave struct {
	entries    []int // payload size of each entry
	vote, term uint64
}

// walWritten is what a test wrote with the real wal package, computed from
// the plan, not from the files.
type walWritten struct {
	entryData    []int64 // payload sizes, in order
	entryFrames  []int64
	perSave      []int64 // entries per state record
	perSync      []int64 // frame bytes per fdatasync
	records      int64
	dataDir      string
	walDir       string
	segmentBytes int64
}

// crcChain follows etcd's record CRCs: CRC-32C over all data so far.
type crcChain uint32

// frameOf is the frame size etcd's encoder gives a record of type typ and
// data: the length word, the record padded to 8 bytes. The CRC is a varint
// in the record, so its size depends on the chain.
func (c *crcChain) frameOf(typ int64, data []byte) int64 {
	if typ != CRCType {
		*c = crcChain(crc32.Update(uint32(*c), crc32.MakeTable(crc32.Castagnoli), data))
	}
	n := int64(proto.Size(&walpb.Record{Type: &typ, Crc: new(uint32(*c)), Data: data}))
	return 8 + (n+7)/8*8
}

// writeWAL writes the plan with etcd's own wal package (wal.Create, Save,
// Close) into dataDir/member/wal, with segments of segBytes.
func writeWAL(t *testing.T, plan []walSave, segBytes int64) walWritten {
	t.Helper()
	old := wal.SegmentSizeBytes
	wal.SegmentSizeBytes = segBytes
	t.Cleanup(func() { wal.SegmentSizeBytes = old })

	data := t.TempDir()
	walDir := filepath.Join(data, "member", "wal")
	if err := os.MkdirAll(filepath.Dir(walDir), 0o700); err != nil {
		t.Fatal(err)
	}
	meta := []byte("etcdbench-test-metadata")
	w, err := wal.Create(zap.NewNop(), walDir, meta)
	if err != nil {
		t.Fatalf("wal.Create: %v", err)
	}
	exp := walWritten{dataDir: data, walDir: walDir, segmentBytes: segBytes}
	// Create: crc, metadata, the empty snapshot, then a sync
	snapData, _ := proto.Marshal(&walpb.Snapshot{Index: new(uint64(0)), Term: new(uint64(0))})
	var chain crcChain
	exp.perSync = append(exp.perSync, chain.frameOf(CRCType, nil)+chain.frameOf(MetadataType, meta)+chain.frameOf(SnapshotType, snapData))
	exp.records = 3

	var index, commit uint64
	var pending int64
	prev := raftpb.HardState{}
	for _, s := range plan {
		var ents []*raftpb.Entry
		for _, size := range s.entries {
			index++
			e := &raftpb.Entry{Term: new(s.term), Index: new(index), Type: raftpb.EntryNormal.Enum(), Data: bytes.Repeat([]byte{'v'}, size)}
			ents = append(ents, e)
			b, err := proto.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			f := chain.frameOf(EntryType, b)
			exp.entryData = append(exp.entryData, int64(size))
			exp.entryFrames = append(exp.entryFrames, f)
			pending += f
			exp.records++
		}
		commit = index
		st := &raftpb.HardState{Term: new(s.term), Vote: new(s.vote), Commit: new(commit)}
		if err := w.Save(st, ents); err != nil {
			t.Fatalf("Save: %v", err)
		}
		b, _ := proto.Marshal(st)
		pending += chain.frameOf(StateType, b)
		exp.records++
		exp.perSave = append(exp.perSave, int64(len(ents)))
		if len(ents) > 0 || s.term != prev.GetTerm() || s.vote != prev.GetVote() {
			exp.perSync = append(exp.perSync, pending)
			pending = 0
		}
		prev = raftpb.HardState{Term: new(s.term), Vote: new(s.vote)}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return exp
}

// testPlan has Saves of 1 to 4 entries of varied sizes, Saves that only
// move the commit index (no sync) and a term change without entries.
func testPlan() []walSave {
	var plan []walSave
	for i := range 40 {
		s := walSave{term: 2, vote: 1}
		for j := range 1 + i%4 {
			s.entries = append(s.entries, 100+37*i+j)
		}
		plan = append(plan, s)
		if i%7 == 3 {
			plan = append(plan, walSave{term: 2, vote: 1}) // commit only
		}
	}
	plan = append(plan, walSave{term: 3, vote: 2}, walSave{term: 3, vote: 2, entries: []int{5000}})
	return plan
}

func countsOf(vs []int64) map[int64]int64 {
	m := map[int64]int64{}
	for _, v := range vs {
		m[v]++
	}
	return m
}

func sameCounts(t *testing.T, what string, got, want map[int64]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d distinct values, want %d\n got %v\nwant %v", what, len(got), len(want), got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d x %d, want %d x", what, got[k], k, v)
		}
	}
}

func TestProfileOfRealWAL(t *testing.T) {
	exp := writeWAL(t, testPlan(), 1<<20)
	dirs, err := FindDir(exp.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if dirs.WALDir != exp.walDir || dirs.DataDir != exp.dataDir {
		t.Fatalf("FindDir(%s) = %+v", exp.dataDir, dirs)
	}
	p, err := ProfileDir(dirs.WALDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Segments) != 1 || p.Segments[0].Tail.End != EndZero || p.Segments[0].Tail.TrailingGarbage {
		t.Fatalf("segments %+v, want one ending at its preallocated zeros", p.Segments)
	}
	if p.Records != exp.records || p.Entries != int64(len(exp.entryData)) {
		t.Errorf("%d records, %d entries; wrote %d, %d", p.Records, p.Entries, exp.records, len(exp.entryData))
	}
	sameCounts(t, "entry payload sizes", p.EntryDataBytes.Counts(), countsOf(exp.entryData))
	sameCounts(t, "entry frame sizes", p.EntryFrameBytes.Counts(), countsOf(exp.entryFrames))
	sameCounts(t, "entries per save", p.EntriesPerSave.Counts(), countsOf(exp.perSave))
	sameCounts(t, "bytes per sync", p.BytesPerSync.Counts(), countsOf(exp.perSync))
	if p.FrameBytes.Sum() != p.Segments[0].Used {
		t.Errorf("frames add up to %d bytes, the records end at %d", p.FrameBytes.Sum(), p.Segments[0].Used)
	}
	compareWithEtcdDecoder(t, exp.walDir, p)
}

// compareWithEtcdDecoder decodes the WAL with etcd's own decoder and checks
// that record types and frame sizes agree with ours, record by record.
func compareWithEtcdDecoder(t *testing.T, walDir string, p *Profile) {
	t.Helper()
	names, err := segmentNames(walDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		f, err := os.Open(filepath.Join(walDir, n))
		if err != nil {
			t.Fatal(err)
		}
		dec := wal.NewDecoder(fileutil.NewFileReader(f))
		b, _ := os.ReadFile(filepath.Join(walDir, n))
		var ours []Record
		DecodeSegment(b, func(r Record) { ours = append(ours, r) })
		var rec walpb.Record
		var last int64
		i := 0
		for ; dec.Decode(&rec) == nil; i++ {
			if rec.GetType() == CRCType {
				dec.UpdateCRC(rec.GetCrc()) // as wal.ReadAll does
			}
			size := dec.LastOffset() - last
			last = dec.LastOffset()
			if i >= len(ours) {
				t.Fatalf("%s: etcd decodes more than our %d records", n, len(ours))
			}
			if ours[i].Type != rec.GetType() || ours[i].Frame.Size() != size {
				t.Errorf("%s record %d: ours type %d, %d bytes; etcd's type %d, %d bytes", n, i, ours[i].Type, ours[i].Frame.Size(), rec.GetType(), size)
			}
		}
		if i != len(ours) {
			t.Errorf("%s: etcd decodes %d records, we %d", n, i, len(ours))
		}
		f.Close()
	}
}

func TestProfileAcrossSegments(t *testing.T) {
	var plan []walSave
	for i := range 300 {
		plan = append(plan, walSave{term: 1, vote: 1, entries: []int{200 + i%50, 300}})
	}
	exp := writeWAL(t, plan, 16<<10) // cuts every 16 KiB
	p, err := ProfileDir(exp.walDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Segments) < 3 {
		t.Fatalf("%d segments, want several cuts", len(p.Segments))
	}
	var used int64
	for i, s := range p.Segments {
		used += s.Used
		want := EndEOF
		if i == len(p.Segments)-1 {
			want = EndZero
		}
		if s.Tail.End != want {
			t.Errorf("segment %s ends %q, want %q", s.Name, s.Tail.End, want)
		}
	}
	sameCounts(t, "entry payload sizes", p.EntryDataBytes.Counts(), countsOf(exp.entryData))
	// every byte is in exactly one batch, except the unsynced end of the
	// last segment (nothing here: every Save had entries)
	if p.BytesPerSync.Sum() != used || p.FrameBytes.Sum() != used {
		t.Errorf("batches add up to %d bytes, frames to %d, segments hold %d", p.BytesPerSync.Sum(), p.FrameBytes.Sum(), used)
	}
	// one batch per Save, one for Create, one per cut's new segment header
	if want := int64(len(plan) + 1 + len(p.Segments) - 1); p.Syncs() != want {
		t.Errorf("%d syncs inferred, want %d", p.Syncs(), want)
	}
	compareWithEtcdDecoder(t, exp.walDir, p)
}

func TestFindDir(t *testing.T) {
	exp := writeWAL(t, testPlan()[:3], 1<<20)
	for _, d := range []string{exp.dataDir, filepath.Join(exp.dataDir, "member"), exp.walDir} {
		got, err := FindDir(d)
		if err != nil || got.WALDir != exp.walDir || got.DataDir != exp.dataDir {
			t.Errorf("FindDir(%s) = %+v, %v; want wal %s, data %s", d, got, err, exp.walDir, exp.dataDir)
		}
	}
	// a --wal-dir outside the data dir: its parent stands for the data dir
	moved := filepath.Join(t.TempDir(), "etcd-wal")
	if err := os.Rename(exp.walDir, moved); err != nil {
		t.Fatal(err)
	}
	if got, err := FindDir(moved); err != nil || got.WALDir != moved || got.DataDir != filepath.Dir(moved) {
		t.Errorf("FindDir(%s) = %+v, %v", moved, got, err)
	}
	if _, err := FindDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.wal files") {
		t.Errorf("an empty directory: %v", err)
	}
}

// damage copies the WAL's single segment into a new WAL dir after fn
// changed its bytes, and decodes it.
func damage(t *testing.T, exp walWritten, fn func(b []byte, used int64) []byte) (*Profile, []byte) {
	t.Helper()
	names, _ := segmentNames(exp.walDir)
	b, err := os.ReadFile(filepath.Join(exp.walDir, names[0]))
	if err != nil {
		t.Fatal(err)
	}
	var clean Profile
	clean.AddSegment(names[0], b)
	b = fn(b, clean.Segments[0].Used)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, names[0]), b, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := ProfileDir(dir)
	if err != nil {
		t.Fatalf("a damaged WAL is an error, want a note: %v", err)
	}
	return p, b
}

func TestDamaged(t *testing.T) {
	plan := testPlan()
	exp := writeWAL(t, plan, 1<<20)
	// the offset of each record, from etcd's own layout
	var offsets []int64
	{
		names, _ := segmentNames(exp.walDir)
		b, _ := os.ReadFile(filepath.Join(exp.walDir, names[0]))
		DecodeSegment(b, func(r Record) { offsets = append(offsets, r.Frame.Offset) })
	}
	lastOff := offsets[len(offsets)-1]
	for _, tc := range []struct {
		name    string
		fn      func(b []byte, used int64) []byte
		records int64
		ends    []End
		note    string
	}{
		{"truncated mid-record", func(b []byte, used int64) []byte { return b[:used-5] },
			exp.records - 1, []End{EndTorn}, "torn tail"},
		{"truncated mid-length-word", func(b []byte, used int64) []byte { return b[:lastOff+3] },
			exp.records - 1, []End{EndTorn}, "torn tail"},
		{"garbage tail", func(b []byte, used int64) []byte {
			for i := used; i < used+4096; i++ {
				b[i] = byte(i*131 + 7)
			}
			return b
		}, exp.records, []End{EndTorn, EndCorrupt}, "offset"},
		{"garbage after a zero word", func(b []byte, used int64) []byte {
			copy(b[used+64:], "garbage")
			return b
		}, exp.records, []End{EndZero}, "garbage tail"},
		{"flipped byte in record 20", func(b []byte, used int64) []byte {
			b[offsets[20]+12] ^= 0x55
			return b
		}, 20, []End{EndCorrupt}, "corrupt record"},
		{"flipped length word", func(b []byte, used int64) []byte {
			b[offsets[30]+7] ^= 0x21
			return b
		}, 30, []End{EndCorrupt, EndTorn}, "offset"},
		{"zeroed sector in the 5000-byte entry", func(b []byte, used int64) []byte {
			start := (offsets[len(offsets)-2]/512 + 2) * 512
			clear(b[start : start+512])
			return b
		}, exp.records - 2, []End{EndTorn}, "sector of zeros"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := damage(t, exp, tc.fn)
			s := p.Segments[0]
			if p.Records != tc.records {
				t.Errorf("%d records decoded, want %d", p.Records, tc.records)
			}
			ok := false
			for _, e := range tc.ends {
				ok = ok || s.Tail.End == e
			}
			if !ok {
				t.Errorf("ends %q (%s), want one of %v", s.Tail.End, s.Tail.Detail, tc.ends)
			}
			wl := p.Workload(Dirs{DataDir: "/d", WALDir: "/d/member/wal"})
			if !strings.Contains(strings.Join(wl.Notes, "\n"), tc.note) {
				t.Errorf("no note with %q:\n%s", tc.note, strings.Join(wl.Notes, "\n"))
			}
		})
	}
}

func TestRecommendBS(t *testing.T) {
	for _, tc := range []struct{ in, want int64 }{
		{0, 8}, {8, 8}, {57, 57}, {99, 99}, {370, 370}, {374, 370}, {375, 380}, {2347, 2300}, {2350, 2400}, {123456, 120000},
	} {
		if got := RecommendBS(tc.in); got != tc.want {
			t.Errorf("RecommendBS(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestSizesQuantile(t *testing.T) {
	var s Sizes
	if s.Quantile(0.5) != 0 || s.Mean() != 0 {
		t.Error("an empty distribution is not 0")
	}
	for _, v := range []int64{5, 1, 3, 3, 9, 7, 3, 100, 2, 4} {
		s.Add(v)
	}
	for _, tc := range []struct {
		q    float64
		want int64
	}{{0.1, 1}, {0.5, 3}, {0.6, 4}, {0.9, 9}, {0.99, 100}, {1, 100}} {
		if got := s.Quantile(tc.q); got != tc.want {
			t.Errorf("Quantile(%v) = %d, want %d", tc.q, got, tc.want)
		}
	}
	if s.Max() != 100 || s.Sum() != 137 || s.Count() != 10 {
		t.Errorf("max %d sum %d count %d", s.Max(), s.Sum(), s.Count())
	}
}

// TestReportGolden renders the profile of a WAL written by the real wal
// package; the WAL's bytes are deterministic, so the report is too.
func TestReportGolden(t *testing.T) {
	exp := writeWAL(t, testPlan(), 1<<20)
	p, err := ProfileDir(exp.walDir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &result.Result{Schema: result.SchemaID, Tool: result.Tool{Name: "etcdbench", Version: "test"}, StartedAt: at}
	r.Environment.Dir = "/var/lib/etcd/member/wal"
	r.Workloads = []result.Workload{p.Workload(Dirs{DataDir: "/var/lib/etcd", WALDir: "/var/lib/etcd/member/wal"})}
	r.Finish(at)
	var buf bytes.Buffer
	if err := report.Text(&buf, r); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "report.golden"), buf.Bytes(), *update)
}
