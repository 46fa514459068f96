package main

import (
	"fmt"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
)

// Tools of a round, as named in tables and the JSON file.
const (
	toolFio      = cmp.ToolFio
	toolEtcd     = cmp.ToolEtcdbench
	toolAdaptive = "etcdbench adaptive"
	toolControl  = "fio (control)"
)

// measurement is one run of one tool.
type measurement struct {
	Tool     string        `json:"tool"`
	Round    int           `json:"round"`
	Position int           `json:"position"` // 1: ran first in its round
	Syncs    int64         `json:"syncs"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	Wall     time.Duration `json:"wall_ns"`    // fork to exit, as this program saw it
	Runtime  time.Duration `json:"runtime_ns"` // the tool's own timed part
	CPU      time.Duration `json:"cpu_ns"`     // user+sys from the child's rusage
	User     time.Duration `json:"user_ns"`
	Sys      time.Duration `json:"sys_ns"`
	Stop     string        `json:"stop,omitempty"`
	// dist is the run's whole fdatasync distribution, for the pooled
	// comparison; empty when the tool's report lacks it. The --json file
	// has it in the run's report.
	dist dist
}

// CPUPerSync is the child's CPU time divided by its fdatasync count.
func (m measurement) CPUPerSync() time.Duration {
	if m.Syncs <= 0 {
		return 0
	}
	return m.CPU / time.Duration(m.Syncs)
}

// round is what one round measured.
type round struct {
	N         int
	Order     []string // the tools, in the order they ran
	Fio, Etcd measurement
	Control   *measurement // fio run again, the A/A control; nil with --control=false
	Adaptive  *measurement // nil with --adaptive=false
}

// ratios is etcdbench over fio for one round.
type ratios struct {
	P50, P99, CPUPerSync float64
}

// roundRatios computes the per-round ratios etcdbench/fio.
func roundRatios(r round) ratios {
	return ratios{
		P50:        cmp.Ratio(r.Etcd.P50, r.Fio.P50),
		P99:        cmp.Ratio(r.Etcd.P99, r.Fio.P99),
		CPUPerSync: cmp.Ratio(r.Etcd.CPUPerSync(), r.Fio.CPUPerSync()),
	}
}

// Metric names shared by targets, rows and the JSON file.
const (
	metricP50 = "fdatasync p50"
	metricP99 = "fdatasync p99"
	metricCPU = "CPU per sync"
)

// targetSource says where the targets come from.
const targetSource = "etcdbench goal: reproduce fio's WAL recipe (same latencies within 10 %) at no more CPU per operation"

// targets are the bands the medians are held to.
func targets() []cmp.Target {
	return []cmp.Target{
		{Metric: metricP50, Lo: 0.9, Hi: 1.1, Source: targetSource},
		{Metric: metricP99, Lo: 0.9, Hi: 1.1, Source: targetSource},
		{Metric: metricCPU, Lo: 0, Hi: 1.0, Source: targetSource},
	}
}

// adaptiveSummary compares etcdbench's adaptive stop with fio's fixed size.
type adaptiveSummary struct {
	Syncs    int64         `json:"syncs_median"`
	Runtime  time.Duration `json:"runtime_median_ns"`
	Wall     time.Duration `json:"wall_median_ns"`
	FioSyncs int64         `json:"fio_syncs_median"`
	FioWall  time.Duration `json:"fio_wall_median_ns"`
	Stops    []string      `json:"stop_reasons"` // kinds of stop, with how many rounds each
}

// summary is the result over all rounds.
type summary struct {
	Rounds   int              `json:"rounds"`
	Rows     []cmp.Row        `json:"rows"`
	Syncs    [2]int64         `json:"syncs_median"` // fio, etcdbench
	Wall     [2]time.Duration `json:"wall_median_ns"`
	CPU      [2]time.Duration `json:"cpu_median_ns"`
	Adaptive *adaptiveSummary `json:"adaptive,omitempty"`
	// Pooled compares the tools' pooled percentiles, and fio's with the
	// control fio's (see pooled.go).
	Pooled []pooledRow `json:"pooled,omitempty"`
}

// summarize takes medians over rounds: of the absolute figures of each tool,
// and of the per-round ratios (which cancel drift between rounds better
// than a ratio of medians would).
func summarize(rs []round) summary {
	s := summary{Rounds: len(rs)}
	pick := func(f func(round) time.Duration) time.Duration {
		ds := make([]time.Duration, len(rs))
		for i, r := range rs {
			ds[i] = f(r)
		}
		return cmp.MedianDur(ds)
	}
	type metric struct {
		fio, etcd func(round) time.Duration
		ratio     func(ratios) float64
	}
	metrics := map[string]metric{
		metricP50: {func(r round) time.Duration { return r.Fio.P50 }, func(r round) time.Duration { return r.Etcd.P50 }, func(x ratios) float64 { return x.P50 }},
		metricP99: {func(r round) time.Duration { return r.Fio.P99 }, func(r round) time.Duration { return r.Etcd.P99 }, func(x ratios) float64 { return x.P99 }},
		metricCPU: {func(r round) time.Duration { return r.Fio.CPUPerSync() }, func(r round) time.Duration { return r.Etcd.CPUPerSync() }, func(x ratios) float64 { return x.CPUPerSync }},
	}
	for _, t := range targets() {
		m := metrics[t.Metric]
		var fio, etcd, xs []float64
		for _, r := range rs {
			fio, etcd = append(fio, float64(m.fio(r))), append(etcd, float64(m.etcd(r)))
			xs = append(xs, m.ratio(roundRatios(r)))
		}
		s.Rows = append(s.Rows, cmp.NewRow(t.Metric, cmp.UnitDuration, fio, etcd, xs, &t))
	}
	s.Syncs = [2]int64{int64(pick(func(r round) time.Duration { return time.Duration(r.Fio.Syncs) })),
		int64(pick(func(r round) time.Duration { return time.Duration(r.Etcd.Syncs) }))}
	s.Wall = [2]time.Duration{pick(func(r round) time.Duration { return r.Fio.Wall }), pick(func(r round) time.Duration { return r.Etcd.Wall })}
	s.CPU = [2]time.Duration{pick(func(r round) time.Duration { return r.Fio.CPU }), pick(func(r round) time.Duration { return r.Etcd.CPU })}
	s.Adaptive = summarizeAdaptive(rs, s.Syncs[0], s.Wall[0])
	s.Pooled = summarizePooled(rs)
	return s
}

// summarizeAdaptive gives the medians of the adaptive runs, nil without any.
func summarizeAdaptive(rs []round, fioSyncs int64, fioWall time.Duration) *adaptiveSummary {
	var ad []round
	for _, r := range rs {
		if r.Adaptive != nil {
			ad = append(ad, r)
		}
	}
	if len(ad) == 0 {
		return nil
	}
	a := &adaptiveSummary{FioSyncs: fioSyncs, FioWall: fioWall}
	syncs := make([]time.Duration, len(ad))
	runtimes := make([]time.Duration, len(ad))
	walls := make([]time.Duration, len(ad))
	var kinds []string
	count := map[string]int{}
	for i, r := range ad {
		syncs[i], runtimes[i], walls[i] = time.Duration(r.Adaptive.Syncs), r.Adaptive.Runtime, r.Adaptive.Wall
		k := stopKind(r.Adaptive.Stop)
		if count[k] == 0 {
			kinds = append(kinds, k)
		}
		count[k]++
	}
	for _, k := range kinds {
		a.Stops = append(a.Stops, fmt.Sprintf("%s (%d of %d rounds)", k, count[k], len(ad)))
	}
	a.Syncs, a.Runtime, a.Wall = int64(cmp.MedianDur(syncs)), cmp.MedianDur(runtimes), cmp.MedianDur(walls)
	return a
}

// stopKind shortens etcdbench's stop reason to its kind, the part before
// the first colon ("verdict decided: at most 0.06 % ..." -> "verdict
// decided"), so that rounds can be counted by it.
func stopKind(reason string) string {
	if reason == "" {
		return "unknown"
	}
	k, _, _ := strings.Cut(reason, ":")
	return k
}
