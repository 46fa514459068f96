package main

import (
	"errors"
	"io"
	"testing"

	"etcdbench/bench/internal/cmp"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.EtcdDuration != "10s" || o.ValSize != 256 || o.FioSize != "22m" || o.Rounds != 5 {
		t.Errorf("defaults %+v", o)
	}
	for _, args := range [][]string{{"--etcd-duration", "0s"}, {"--etcd-duration", "soon"}, {"--rounds", "1"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(cmp.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
