package diagnose

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"etcdbench/internal/etcdproc"
)

// FuzzWALDecodeSegment: any bytes decode without panic, good frames tile
// the file from offset 0 without gaps up to the tail, and the tail is
// inside the data.
func FuzzWALDecodeSegment(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		var next int64
		tail := WALDecodeSegment(b, func(r WALRecord) {
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
		case WALEndEOF:
			if tail.Offset != int64(len(b)) {
				t.Fatalf("eof at %d of %d", tail.Offset, len(b))
			}
		case WALEndZero, WALEndTorn, WALEndCorrupt:
		default:
			t.Fatalf("unknown end %q", tail.End)
		}
		// the profile on top never fails either
		var p WALProfile
		p.AddSegment("fuzz.wal", b)
		if p.FrameBytes.Sum() != tail.Offset {
			t.Fatalf("profile counts %d bytes, frames end at %d", p.FrameBytes.Sum(), tail.Offset)
		}
	})
}

// FuzzStraceParseLine: no panic; a call line's fields are consistent; the
// parser's joining never fails on any sequence.
func FuzzStraceParseLine(f *testing.F) {
	f.Add("8737  04:18:17.495422 <... fdatasync resumed>) = 0 <0.000399>")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := StraceParseLine(s)
		if err != nil {
			return
		}
		if l.Kind == StraceCallLine && l.Name == "" {
			t.Fatalf("a call without a name: %+v", l)
		}
		if l.Ret < -1 || l.Dur < -1 || l.At < -1 {
			t.Fatalf("out of range: %+v", l)
		}
		var p StraceParser
		p.Line(s)
		p.Line(s)
		p.Add(s)
	})
}

// Add feeds a line through a fresh profile too (only for the fuzz test).
func (p *StraceParser) Add(s string) {
	if c, ok := p.Line(s); ok {
		NewStraceProfile().Add(c, etcdproc.Files{})
	}
}

// TestWriteFuzzSeeds writes the seed corpora of the fuzz tests under
// -update: real WAL bytes from etcd's wal package, damaged copies, and the
// lines of a real strace capture.
func TestWriteFuzzSeeds(t *testing.T) {
	if !*update {
		t.Skip("writes testdata/fuzz only with -update")
	}
	exp := writeWAL(t, testPlan()[:6], 64<<10)
	names, _ := walSegmentNames(exp.walDir)
	b, err := os.ReadFile(filepath.Join(exp.walDir, names[0]))
	if err != nil {
		t.Fatal(err)
	}
	var clean WALProfile
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
		writeSeed(t, "FuzzWALDecodeSegment", name, strconv.Quote(string(s)), "[]byte")
	}
	fh, err := os.Open(filepath.Join("testdata", "wal", "strace-etcd34.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for i := 0; sc.Scan(); i++ {
		if i%4 == 0 || i < 4 {
			writeSeed(t, "FuzzStraceParseLine", fmt.Sprintf("etcd34-%02d", i), strconv.Quote(sc.Text()), "string")
		}
	}
}

func writeSeed(t *testing.T, fuzz, name, quoted, typ string) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", fuzz)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("go test fuzz v1\n%s(%s)\n", typ, quoted)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
