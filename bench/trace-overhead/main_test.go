package main

import (
	"errors"
	"io"
	"testing"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/cmp/cmptest"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		if errors.As(err, new(cmp.UsageError)) {
			t.Skipf("no strace here: %v", err)
		}
		t.Fatal(err)
	}
	if o.Conns != 10 || o.Clients != 100 || o.Total != 60000 || !o.NoFio {
		t.Errorf("defaults %+v", o)
	}
	for _, args := range [][]string{{"--clients", "1", "--conns", "2"}, {"--total", "0"}, {"--rounds", "2"}, {"--fio", "fio"}} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(cmp.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestMeasurement reads a real `etcdbench etcd put -o json` report.
func TestMeasurement(t *testing.T) {
	put := cmptest.ReadFixture(t, "../../put-vs-etcd-benchmark/testdata/etcdbench-put.json")
	m, err := measurement(runNone, cmp.Child{Stdout: put}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, traced := m.Figures["wal_syncs_traced"]; m.Figures["ops_per_sec"] <= 0 || m.Figures["p99_ns"] <= 0 || traced {
		t.Errorf("figures %v", m.Figures)
	}
	if _, err := measurement(runEBPF, cmp.Child{Stdout: put}, []byte("not json")); err == nil {
		t.Error("an eBPF run without the tracer's result was accepted")
	}
}
