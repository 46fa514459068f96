package main

import (
	"errors"
	"fmt"
	"time"

	"etcdbench/bench/internal/cmp"
)

// report is what either tool says about one run of puts.
type report = cmp.ToolReport

// parseBenchmark reads benchmark's summary (cmp.ParseBenchmark).
var parseBenchmark = cmp.ParseBenchmark

// parseEtcdbench reads an `etcdbench etcd put|range -o json` report: the
// etcd-<op> workload's ops, duration, ops_per_sec and the percentiles of
// its "request" latency; failed requests from its failed_requests figure.
func parseEtcdbench(b []byte, op string) (report, error) {
	w, err := cmp.EtcdbenchWorkload(b, "etcd-"+op)
	if err != nil {
		return report{}, err
	}
	r := report{Requests: w.Ops, Total: time.Duration(w.DurationNs), OpsPerSec: w.OpsPerSec, Percentiles: map[float64]time.Duration{}}
	lat := w.Latency("request")
	if lat == nil {
		return r, errors.New(`etcdbench's workload has no "request" latency`)
	}
	for _, p := range lat.Percentiles {
		r.Percentiles[p.P] = time.Duration(p.ValueNs)
	}
	for _, p := range []float64{50, 99} {
		if _, ok := r.Percentiles[p]; !ok {
			return r, fmt.Errorf("etcdbench's request latency has no p%g", p)
		}
	}
	if f := w.Figure("failed_requests"); f != nil && f.Value > 0 {
		r.Errors = int64(f.Value)
	}
	if r.Requests <= 0 || r.OpsPerSec <= 0 {
		return r, fmt.Errorf("etcdbench's workload did no requests (ops %d, ops_per_sec %g)", r.Requests, r.OpsPerSec)
	}
	return r, nil
}
