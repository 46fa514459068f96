package walfile

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"etcdbench/internal/testutil"
)

// FuzzDecodeSegment: any bytes decode without panic, good frames tile
// the file from offset 0 without gaps up to the tail, and the tail is
// inside the data.
func FuzzDecodeSegment(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		var next int64
		tail := DecodeSegment(b, func(r Record) {
			if r.Frame.Offset != next {
				t.Fatalf("frame at %d, the previous ended at %d", r.Frame.Offset, next)
			}
			if r.Frame.Size()%8 != 0 || r.Frame.RecBytes <= 0 {
				t.Fatalf("frame %+v is not 8-byte aligned", r.Frame)
			}
			next += r.Frame.Size()
		})
		if tail.Offset != next || tail.Offset > int64(len(b)) {
			t.Fatalf("tail %+v after frames ending at %d, data %d bytes", tail, next, len(b))
		}
		switch tail.End {
		case EndEOF:
			if tail.Offset != int64(len(b)) {
				t.Fatalf("eof at %d of %d", tail.Offset, len(b))
			}
		case EndZero, EndTorn, EndCorrupt:
		default:
			t.Fatalf("unknown end %q", tail.End)
		}
		// the profile on top never fails either
		var p Profile
		p.AddSegment("fuzz.wal", b)
		if p.FrameBytes.Sum() != tail.Offset {
			t.Fatalf("profile counts %d bytes, frames end at %d", p.FrameBytes.Sum(), tail.Offset)
		}
	})
}

// TestWriteFuzzSeeds writes the seed corpus of the fuzz test under
// -update: real WAL bytes from etcd's wal package and damaged copies.
func TestWriteFuzzSeeds(t *testing.T) {
	if !*update {
		t.Skip("writes testdata/fuzz only with -update")
	}
	exp := writeWAL(t, testPlan()[:6], 64<<10)
	names, _ := segmentNames(exp.walDir)
	b, err := os.ReadFile(filepath.Join(exp.walDir, names[0]))
	if err != nil {
		t.Fatal(err)
	}
	var clean Profile
	clean.AddSegment("x", b)
	used := clean.Segments[0].Used
	real := b[:used+16]
	flipped := append([]byte(nil), real...)
	flipped[200] ^= 0xff
	seeds := map[string][]byte{
		"real":       real,
		"truncated":  real[:used-5],
		"flipped":    flipped,
		"garbage":    append(append([]byte(nil), real[:used]...), []byte("garbage tail\x01\x02\x03\x04")...),
		"badpadflag": {0x08, 0, 0, 0, 0, 0, 0, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8},
	}
	for name, s := range seeds {
		testutil.WriteFuzzSeed(t, "FuzzDecodeSegment", name, strconv.Quote(string(s)), "[]byte")
	}
}
