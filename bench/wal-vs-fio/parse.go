package main

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/fio"
	"etcdbench/internal/result"
)

// syncStats is what both tools report about their fdatasync calls.
type syncStats struct {
	Syncs int64
	P50   time.Duration
	P99   time.Duration
}

// fioJob is one entry of fio's "jobs" array.
type fioJob struct {
	Name string
	syncStats
}

// fioResult is a parsed fio JSON report.
type fioResult struct {
	Version string
	Jobs    []fioJob
	// Dist is every job's sync latencies, from json+ bins; empty when the
	// report has none (--output-format=json).
	Dist dist
}

// Total folds the jobs into one figure: syncs are summed; the percentiles
// are the worst job's, because fio reports each job's histogram separately
// (unless group_reporting) and percentiles cannot be merged exactly. With
// one job, which is what this program runs, it is that job's figures.
func (r fioResult) Total() syncStats {
	var t syncStats
	for _, j := range r.Jobs {
		t.Syncs += j.Syncs
		t.P50 = max(t.P50, j.P50)
		t.P99 = max(t.P99, j.P99)
	}
	return t
}

// parseFio reads fio's --output-format=json or json+ report: per job,
// sync.lat_ns.N and the 50th and 99th percentiles (ns), and with json+
// every job's latency bins as one dist.
func parseFio(b []byte) (fioResult, error) {
	if _, err := cmp.FirstJSON(b); err != nil {
		return fioResult{}, err
	}
	doc, err := fio.Parse(b)
	if errors.Is(err, fio.ErrNoJobs) {
		return fioResult{}, errors.New("fio's JSON report has no jobs")
	}
	if err != nil {
		return fioResult{}, fmt.Errorf("reading fio's JSON report: %w", err)
	}
	res := fioResult{Version: doc.Version}
	var bins []map[string]int64
	for i, j := range doc.Jobs {
		if j.Error != 0 {
			return fioResult{}, fmt.Errorf("fio job %d (%q) reports error %d", i, j.Name, j.Error)
		}
		if j.Sync == nil {
			return fioResult{}, fmt.Errorf("fio job %d (%q) has no sync latencies: this fio is too old (they need fio >= 3.5)", i, j.Name)
		}
		lat := j.Sync.Lat
		if lat.N <= 0 {
			return fioResult{}, fmt.Errorf("fio job %d (%q) made no fdatasync calls: was --fdatasync=1 given?", i, j.Name)
		}
		p50, err := fioPercentile(lat, 50)
		if err != nil {
			return fioResult{}, fmt.Errorf("fio job %d (%q): %w", i, j.Name, err)
		}
		p99, err := fioPercentile(lat, 99)
		if err != nil {
			return fioResult{}, fmt.Errorf("fio job %d (%q): %w", i, j.Name, err)
		}
		res.Jobs = append(res.Jobs, fioJob{Name: j.Name, syncStats: syncStats{Syncs: lat.N, P50: p50, P99: p99}})
		if len(lat.Bins) > 0 {
			bins = append(bins, lat.Bins)
		}
	}
	if len(bins) == len(doc.Jobs) {
		if res.Dist, err = distFromBins(bins...); err != nil {
			return fioResult{}, err
		}
		if n, want := res.Dist.N(), res.Total().Syncs; n != want {
			return fioResult{}, fmt.Errorf("fio's sync latency bins hold %d samples, its jobs made %d syncs", n, want)
		}
	}
	return res, nil
}

// fioPercentile looks up p in fio's percentile map, keyed "99.000000".
func fioPercentile(lat fio.Lat, p float64) (time.Duration, error) {
	v, ok := lat.At(p)
	if !ok {
		return 0, fmt.Errorf("no %q sync percentile (fio's default percentile_list has it; was it changed?)", strconv.FormatFloat(p, 'f', 6, 64))
	}
	if v < 0 {
		return 0, fmt.Errorf("negative sync percentile %v: %d", p, v)
	}
	return time.Duration(v), nil
}

// ebResult is the part of an etcdbench JSON report this program uses.
type ebResult struct {
	syncStats
	Duration   time.Duration // the timed loop, as etcdbench measured it
	StopMode   string
	StopReason string
	Dist       dist // empty when the report has no histogram
}

// parseEtcdbench reads `etcdbench disk wal -o json`: the "wal" workload's
// ops, duration, stop reason and its fdatasync latency percentiles.
func parseEtcdbench(b []byte) (ebResult, error) {
	js, err := cmp.FirstJSON(b)
	if err != nil {
		return ebResult{}, err
	}
	doc, err := result.Read(bytes.NewReader(js))
	if err != nil {
		return ebResult{}, fmt.Errorf("reading etcdbench's JSON report: %w", err)
	}
	for i := range doc.Workloads {
		w := &doc.Workloads[i]
		if w.Name != "wal" {
			continue
		}
		res := ebResult{Duration: time.Duration(w.DurationNs), StopMode: w.Stop.Mode, StopReason: w.Stop.Reason}
		l := w.Latency("fdatasync")
		if l == nil {
			return ebResult{}, errors.New("etcdbench's wal workload has no fdatasync latencies")
		}
		if l.Count <= 0 {
			return ebResult{}, errors.New("etcdbench's wal workload recorded no fdatasync")
		}
		p50, ok50 := l.At(50)
		p99, ok99 := l.At(99)
		if !ok50 || !ok99 {
			return ebResult{}, errors.New("etcdbench's fdatasync latencies lack the 50th or 99th percentile")
		}
		res.Syncs, res.P50, res.P99 = l.Count, time.Duration(p50), time.Duration(p99)
		if res.Dist, err = distFromLatency(l); err != nil && !errors.Is(err, errNoHistogram) {
			return ebResult{}, err
		}
		return res, nil
	}
	return ebResult{}, errors.New(`etcdbench's JSON report has no "wal" workload`)
}
