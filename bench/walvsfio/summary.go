package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Tools of a round, as named in tables and the JSON file.
const (
	toolFio      = "fio"
	toolEtcd     = "etcdbench"
	toolAdaptive = "etcdbench adaptive"
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
	FioFirst  bool
	Fio, Etcd measurement
	Adaptive  *measurement // nil with --adaptive=false
}

// ratios is etcdbench over fio for one round.
type ratios struct {
	P50, P99, CPUPerSync float64
}

// ratio returns a/b, or NaN when b is zero (nothing to compare with).
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// roundRatios computes the per-round ratios etcdbench/fio.
func roundRatios(r round) ratios {
	return ratios{
		P50:        ratio(r.Etcd.P50, r.Fio.P50),
		P99:        ratio(r.Etcd.P99, r.Fio.P99),
		CPUPerSync: ratio(r.Etcd.CPUPerSync(), r.Fio.CPUPerSync()),
	}
}

// median returns the median of xs, NaNs left out (the mean of the middle
// two for an even count), or NaN when nothing is left. xs is not changed.
func median(xs []float64) float64 {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianDur is median over durations, rounded to the nanosecond.
func medianDur(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	m := median(xs)
	if math.IsNaN(m) {
		return 0
	}
	return time.Duration(math.Round(m))
}

// target is an acceptance band for a median ratio etcdbench/fio.
type target struct {
	Metric string  `json:"metric"`
	Lo     float64 `json:"lo"` // 0: no lower bound
	Hi     float64 `json:"hi"`
	Source string  `json:"source"`
}

// Met reports whether x lies in the band.
func (t target) Met(x float64) bool {
	return !math.IsNaN(x) && x >= t.Lo && x <= t.Hi
}

// Metric names shared by targets, rows and the JSON file.
const (
	metricP50 = "fdatasync p50"
	metricP99 = "fdatasync p99"
	metricCPU = "CPU per sync"
)

// targets are the bands the medians are held to.
func targets() []target {
	const src = "etcdbench goal: reproduce fio's WAL recipe (same latencies within 10 %) at no more CPU per operation"
	return []target{
		{Metric: metricP50, Lo: 0.9, Hi: 1.1, Source: src},
		{Metric: metricP99, Lo: 0.9, Hi: 1.1, Source: src},
		{Metric: metricCPU, Lo: 0, Hi: 1.0, Source: src},
	}
}

// row is one line of the final summary.
type row struct {
	Metric   string        `json:"metric"`
	Fio      time.Duration `json:"fio_median_ns"`
	Etcd     time.Duration `json:"etcdbench_median_ns"`
	Ratio    jsonFloat     `json:"ratio_median"` // median of per-round ratios
	RatioMin jsonFloat     `json:"ratio_min"`
	RatioMax jsonFloat     `json:"ratio_max"`
	Target   target        `json:"target"`
	Met      bool          `json:"met"`
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
	Rows     []row            `json:"rows"`
	Syncs    [2]int64         `json:"syncs_median"` // fio, etcdbench
	Wall     [2]time.Duration `json:"wall_median_ns"`
	CPU      [2]time.Duration `json:"cpu_median_ns"`
	Adaptive *adaptiveSummary `json:"adaptive,omitempty"`
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
		return medianDur(ds)
	}
	rats := make([]ratios, len(rs))
	for i, r := range rs {
		rats[i] = roundRatios(r)
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
		xs := make([]float64, len(rats))
		for i, x := range rats {
			xs[i] = m.ratio(x)
		}
		med := median(xs)
		lo, hi := minMax(xs)
		s.Rows = append(s.Rows, row{
			Metric: t.Metric, Fio: pick(m.fio), Etcd: pick(m.etcd),
			Ratio: jsonFloat(med), RatioMin: jsonFloat(lo), RatioMax: jsonFloat(hi), Target: t, Met: t.Met(med),
		})
	}
	s.Syncs = [2]int64{int64(pick(func(r round) time.Duration { return time.Duration(r.Fio.Syncs) })),
		int64(pick(func(r round) time.Duration { return time.Duration(r.Etcd.Syncs) }))}
	s.Wall = [2]time.Duration{pick(func(r round) time.Duration { return r.Fio.Wall }), pick(func(r round) time.Duration { return r.Etcd.Wall })}
	s.CPU = [2]time.Duration{pick(func(r round) time.Duration { return r.Fio.CPU }), pick(func(r round) time.Duration { return r.Etcd.CPU })}

	var ad []round
	for _, r := range rs {
		if r.Adaptive != nil {
			ad = append(ad, r)
		}
	}
	if len(ad) > 0 {
		a := &adaptiveSummary{}
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
		a.Syncs, a.Runtime, a.Wall = int64(medianDur(syncs)), medianDur(runtimes), medianDur(walls)
		a.FioSyncs, a.FioWall = s.Syncs[0], s.Wall[0]
		s.Adaptive = a
	}
	return s
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

// minMax returns the smallest and largest of xs, NaNs left out.
func minMax(xs []float64) (lo, hi float64) {
	lo, hi = math.NaN(), math.NaN()
	for _, x := range xs {
		if math.IsNaN(x) {
			continue
		}
		if math.IsNaN(lo) || x < lo {
			lo = x
		}
		if math.IsNaN(hi) || x > hi {
			hi = x
		}
	}
	return lo, hi
}

// jsonFloat is a float64 that encodes NaN (no ratio) as JSON null, which
// encoding/json refuses to do for a plain float64.
type jsonFloat float64

// MarshalJSON implements json.Marshaler.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}
