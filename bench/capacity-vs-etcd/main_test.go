package main

import (
	"errors"
	"io"
	"math"
	"testing"

	"etcdbench/bench/internal/cmp"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Cap != 80 || o.Delay != "2ms" || o.Bandwidth != 1_000_000 || o.EntryBytes != 1400 || o.Rounds != 3 {
		t.Errorf("defaults %+v", o)
	}
	for _, args := range [][]string{{"--cap", "0"}, {"--delay", "soon"}, {"--bandwidth", "-1"}, {"--rounds", "1"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(cmp.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func TestRatioAndMedian(t *testing.T) {
	if r := ratio(300, 200); r != 1.5 {
		t.Errorf("ratio(300, 200) = %v", r)
	}
	if r := ratio(300, 0); !math.IsInf(r, 1) {
		t.Errorf("ratio against a zero real rate: %v, want +Inf", r)
	}
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median = %v", m)
	}
}
