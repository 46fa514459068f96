package strace

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"etcdbench/internal/etcdproc"
	"etcdbench/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the fuzz seeds")

// FuzzParseLine: no panic; a call line's fields are consistent; the
// parser's joining never fails on any sequence.
func FuzzParseLine(f *testing.F) {
	f.Add("8737  04:18:17.495422 <... fdatasync resumed>) = 0 <0.000399>")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLine(s)
		if err != nil {
			return
		}
		if l.Kind == CallLine && l.Name == "" {
			t.Fatalf("a call without a name: %+v", l)
		}
		if l.Ret < -1 || l.Dur < -1 || l.At < -1 {
			t.Fatalf("out of range: %+v", l)
		}
		var p Parser
		p.Line(s)
		p.Line(s)
		p.Add(s)
	})
}

// Add feeds a line through a fresh profile too (only for the fuzz test).
func (p *Parser) Add(s string) {
	if c, ok := p.Line(s); ok {
		NewProfile().Add(c, etcdproc.Files{})
	}
}

// TestWriteFuzzSeeds writes the seed corpus of the fuzz test under
// -update: the lines of a real strace capture.
func TestWriteFuzzSeeds(t *testing.T) {
	if !*update {
		t.Skip("writes testdata/fuzz only with -update")
	}
	fh, err := os.Open(filepath.Join("testdata", "strace-etcd34.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for i := 0; sc.Scan(); i++ {
		if i%4 == 0 || i < 4 {
			testutil.WriteFuzzSeed(t, "FuzzParseLine", fmt.Sprintf("etcd34-%02d", i), strconv.Quote(sc.Text()), "string")
		}
	}
}
