package main

import (
	"errors"
	"io"
	"os"
	"testing"

	"etcdbench/bench/internal/cmp"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Total < 60000 || o.Clients != 100 || !o.NoFio || o.ScrapeEvery <= 0 {
		t.Errorf("defaults %+v", o)
	}
	for _, args := range [][]string{{"--clients", "1", "--conns", "2"}, {"--total", "0"}, {"--rounds", "2"}, {"--scrape-every", "1ms"}, {"--fio", "fio"}} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(cmp.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func TestWALSyncs(t *testing.T) {
	scrape := []byte(`# HELP etcdbench_syncs_total x
# TYPE etcdbench_syncs_total counter
etcdbench_syncs_total{call="fdatasync",data_dir="/d",file="db",member="m"} 7
etcdbench_syncs_total{call="fdatasync",data_dir="/d",file="wal",member="m"} 1200
etcdbench_syncs_total{call="fsync",data_dir="/d",file="wal",member="m"} 3
etcdbench_sync_duration_seconds_count{data_dir="/d",file="wal",member="m"} 1203
`)
	if got, err := walSyncs(scrape); err != nil || got != 1203 {
		t.Errorf("walSyncs = %g, %v; want 1203", got, err)
	}
	if _, err := walSyncs([]byte(`etcdbench_syncs_total{file="wal"} x`)); err == nil {
		t.Error("a malformed value was accepted")
	}
}

func TestResidentBytes(t *testing.T) {
	if n, err := residentBytes(os.Getpid()); err != nil || n <= 0 {
		t.Errorf("residentBytes(self) = %d, %v", n, err)
	}
}
