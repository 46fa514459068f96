package cmp

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"
)

// PutLoad is the `etcdbench etcd put` load of the overhead benches
// (trace-overhead, exporter-overhead): the same puts against one etcd
// with and without an observer attached.
type PutLoad struct {
	Conns   int   `json:"conns"`
	Clients int   `json:"clients"`
	Total   int64 `json:"total"`
	ValSize int   `json:"val_size"`
}

// DefaultPutLoad is 60,000 puts of 256 bytes from 100 clients on 10
// connections: at least 60,000 puts a run, so that a few percent of
// throughput is more than a run's noise.
func DefaultPutLoad() PutLoad { return PutLoad{Conns: 10, Clients: 100, Total: 60000, ValSize: 256} }

// Register adds the load's flags to fs, with l's values as defaults.
func (l *PutLoad) Register(fs *flag.FlagSet) {
	fs.IntVar(&l.Conns, "conns", l.Conns, "gRPC connections of the load")
	fs.IntVar(&l.Clients, "clients", l.Clients, "clients of the load")
	fs.Int64Var(&l.Total, "total", l.Total, "puts per run")
	fs.IntVar(&l.ValSize, "val-size", l.ValSize, "value bytes")
}

// Check reports a UsageError for a load that cannot run.
func (l PutLoad) Check() error {
	if l.Conns < 1 || l.Clients < l.Conns || l.Total < 1 || l.ValSize < 0 {
		return UsageError{Err: fmt.Errorf("--conns %d --clients %d --total %d --val-size %d: want at least one connection, no fewer clients, some puts", l.Conns, l.Clients, l.Total, l.ValSize)}
	}
	return nil
}

// String describes the load for a bench's header line.
func (l PutLoad) String() string {
	return fmt.Sprintf("etcdbench etcd put, %d conns / %d clients, %d puts of %d B", l.Conns, l.Clients, l.Total, l.ValSize)
}

// Run sends the load to the etcd at url with etcdbench and returns the
// finished child (its JSON result on Stdout).
func (l PutLoad) Run(ctx context.Context, etcdbench, url string) (Child, error) {
	return RunChild(ctx, []int{1}, etcdbench, "etcd", "put", "--endpoints", url, "--yes",
		"--conns", strconv.Itoa(l.Conns), "--clients", strconv.Itoa(l.Clients), "--total", strconv.FormatInt(l.Total, 10),
		"--val-size", strconv.Itoa(l.ValSize), "-o", "json", "--no-progress")
}

// PutMeasurement reads a put load's result into a measurement of run:
// its throughput (ops_per_sec) and request p99 (p99_ns), and the child's
// time and CPU.
func PutMeasurement(run string, ch Child) (Measurement, error) {
	w, err := EtcdbenchWorkload(ch.Stdout, "etcd-put")
	if err != nil {
		return Measurement{}, err
	}
	// A figure a run does not have is left out (JSON has no NaN).
	m := Measurement{Tool: run, Ops: w.Ops, Runtime: time.Duration(w.DurationNs), Figures: map[string]float64{
		"ops_per_sec": w.OpsPerSec,
	}}
	if l := w.Latency("request"); l != nil {
		for _, p := range l.Percentiles {
			if p.P == 99 {
				m.Figures["p99_ns"] = float64(p.ValueNs)
			}
		}
	}
	m.FromChild(ch)
	return m, nil
}
