package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
)

// report is what either tool says about one run of puts.
type report struct {
	Requests  int64         // requests the tool counted (benchmark: from its histogram)
	Total     time.Duration // the tool's own timed part
	OpsPerSec float64
	// Percentiles are latency percentiles by p (50, 99, ...).
	Percentiles map[float64]time.Duration
	Errors      int64 // failed requests
}

// parseBenchmark reads the text etcd's tools/benchmark prints after a put
// run (its "Summary:" report, with or without --precise):
//
//	Summary:
//	  Total:	0.1922 secs.
//	  ...
//	  Requests/sec:	10403.6863
//	Response time histogram:
//	  0.0015 [1]	|
//	  ...
//	Latency distribution:
//	  10% in 0.0047 secs.
//	  ...
//	  99% in 0.0182 secs.
//	Error distribution:
//	  [3]	context deadline exceeded
//
// Requests/sec and the 50 % and 99 % lines are required.
func parseBenchmark(b []byte) (report, error) {
	r := report{Percentiles: map[float64]time.Duration{}}
	haveRate := false
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case strings.HasSuffix(line, ":") && !strings.Contains(line, "\t"):
			section = strings.TrimSuffix(line, ":")
			continue
		}
		switch section {
		case "Summary":
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			v = strings.TrimSuffix(strings.TrimSpace(v), " secs.")
			switch k {
			case "Requests/sec":
				x, err := parseNonNeg(v)
				if err != nil {
					return r, fmt.Errorf("benchmark's Requests/sec %q: %w", v, err)
				}
				r.OpsPerSec, haveRate = x, true
			case "Total":
				d, err := parseSecs(v)
				if err != nil {
					return r, fmt.Errorf("benchmark's Total %q: %w", v, err)
				}
				r.Total = d
			}
		case "Response time histogram":
			// "0.0015 [123]	|∎∎∎"
			_, rest, ok := strings.Cut(line, "[")
			if !ok {
				continue
			}
			n, _, ok := strings.Cut(rest, "]")
			if c, err := strconv.ParseInt(n, 10, 64); ok && err == nil && c >= 0 {
				r.Requests += c
			}
		case "Latency distribution":
			// "99.9% in 0.0196 secs."
			p, v, ok := strings.Cut(line, "% in ")
			if !ok {
				continue
			}
			pf, err := parseNonNeg(p)
			if err != nil || pf > 100 {
				return r, fmt.Errorf("benchmark's latency line %q: bad percentile", line)
			}
			d, err := parseSecs(strings.TrimSuffix(v, " secs."))
			if err != nil {
				return r, fmt.Errorf("benchmark's latency line %q: %w", line, err)
			}
			r.Percentiles[pf] = d
		case "Error distribution":
			// "[3]	context deadline exceeded"
			if n, _, ok := strings.Cut(strings.TrimPrefix(line, "["), "]"); ok {
				if c, err := strconv.ParseInt(n, 10, 64); err == nil && c > 0 {
					r.Errors += c
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return r, fmt.Errorf("reading benchmark's output: %w", err)
	}
	if !haveRate {
		return r, errors.New("benchmark's output has no Requests/sec line")
	}
	for _, p := range []float64{50, 99} {
		if _, ok := r.Percentiles[p]; !ok {
			return r, fmt.Errorf("benchmark's output has no %g%% latency line", p)
		}
	}
	return r, nil
}

// parseNonNeg parses a finite float >= 0.
func parseNonNeg(s string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return 0, fmt.Errorf("%q is not a finite number >= 0", s)
	}
	return x, nil
}

// parseSecs parses seconds such as "0.0027" into a duration (up to about
// 290 years).
func parseSecs(s string) (time.Duration, error) {
	x, err := parseNonNeg(s)
	if err != nil {
		return 0, err
	}
	if x > float64(math.MaxInt64)/1e9 {
		return 0, fmt.Errorf("%q seconds is too long", s)
	}
	return time.Duration(math.Round(x * 1e9)), nil
}

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
