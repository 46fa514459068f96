package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
)

const (
	// minPartialSecond is the shortest partial last second drawn: over
	// less, a rate or a p99 says more about the cut than about the run.
	minPartialSecond = 0.2
	// wholeSecondSlack absorbs the run's end being recorded a hair before
	// the last second's boundary.
	wholeSecondSlack = 1e-3
)

// timeSeries is a per-second series (stats.SecondSample: sample T covers
// (T-1, T]) with what the workload's duration tells about its last second,
// which the run usually ends part-way through.
type timeSeries struct {
	s []stats.SecondSample
	// what stalls in the caption: "the workload" or the latency's name.
	what string
	// end is where the x axis ends: the run's end when known.
	end float64
	// partial is the part of its last second the run lasted, in (0, 1),
	// when the duration shows it; 0 otherwise.
	partial float64
	// lastWhole is set when the duration shows the last second is whole,
	// so it can be judged a stall like the others.
	lastWhole bool
	// sporadic: an operation that need not happen every second (a db or
	// snapshot sync), whose seconds without one are stalls only when the
	// median second has some.
	sporadic bool
}

// newTimeSeries reads the last second's share from the workload's
// duration (0 when unknown). s must not be empty.
func newTimeSeries(s []stats.SecondSample, durationNs int64, what string) timeSeries {
	ts := timeSeries{s: s, what: what, end: float64(s[len(s)-1].T)}
	if durationNs <= 0 {
		return ts
	}
	dur := float64(durationNs) / float64(time.Second)
	switch f := dur - float64(s[len(s)-1].T-1); {
	case f >= 1-wholeSecondSlack:
		ts.lastWhole = true
	case f > 0:
		ts.partial, ts.end = f, dur
	}
	return ts
}

// drawn returns the samples the charts draw: all of them but a partial
// last second too short to stand for a second.
func (ts timeSeries) drawn() []stats.SecondSample {
	if ts.omitsLast() {
		return ts.s[:len(ts.s)-1]
	}
	return ts.s
}

func (ts timeSeries) omitsLast() bool { return ts.partial > 0 && ts.partial < minPartialSecond }

// span is the part of the run sample x covers: (T-1, T], or up to the
// run's end for a partial last second.
func (ts timeSeries) span(x stats.SecondSample) (from, to, share float64) {
	from, to, share = float64(x.T-1), float64(x.T), 1
	if ts.partial > 0 && x.T == ts.s[len(ts.s)-1].T {
		to, share = from+ts.partial, ts.partial
	}
	return from, to, share
}

// partialNote tells what became of a partial last second, or "".
func (ts timeSeries) partialNote() string {
	if ts.omitsLast() {
		return fmt.Sprintf("the run's last %s, part of a second, is not drawn", units.FormatDuration(units.FromSeconds(ts.partial)))
	}
	return ""
}

// stalls returns the seconds in which the operation nearly stopped: none
// completed, or fewer than a tenth of the median second's. A last second
// the run may have ended part-way through is never one.
func stalls(ts timeSeries) [][2]float64 {
	s := ts.s
	if !ts.lastWhole {
		s = s[:len(s)-1]
	}
	if len(s) == 0 {
		return nil
	}
	ops := make([]int64, len(s))
	for i, x := range s {
		ops[i] = x.Ops
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	median := ops[len(ops)/2]
	if ts.sporadic && median == 0 {
		return nil
	}
	var out [][2]float64
	for _, x := range s {
		if x.Ops == 0 || x.Ops*10 < median {
			out = append(out, [2]float64{float64(x.T - 1), float64(x.T)})
		}
	}
	return out
}

func (ts timeSeries) stallNote(bars bool) string {
	what := "shaded"
	if bars {
		what = "shaded, bars in red"
	}
	return fmt.Sprintf("%s: seconds in which %s stalled (no operation completed, or under a tenth of the median)", what, ts.what)
}

// seriesLabels names what a workload's per-second series counts.
func seriesLabels(wl *result.Workload) (op, rate string) {
	op = "operation"
	if len(wl.Latencies) > 0 {
		op = wl.Latencies[0].Name
	}
	switch {
	case isWALTest(wl):
		return op, "write+fdatasync cycles per second"
	case isEtcdLoad(wl):
		return op, "requests per second (throughput)"
	}
	return op, "operations per second"
}

// latencyOverTimeChart draws each second's p99 and slowest operation on a
// log scale, with the threshold (ns, 0 for none) and the stalled seconds
// shaded.
func latencyOverTimeChart(id, title string, ts timeSeries, thresholdNs int64) *chart {
	s := ts.drawn()
	if len(s) == 0 {
		return nil
	}
	lo, hi := math.Inf(1), 0.0
	for _, x := range s {
		if x.Ops > 0 {
			lo, hi = math.Min(lo, float64(x.P99Ns)), math.Max(hi, float64(x.MaxNs))
		}
	}
	if hi == 0 {
		lo, hi = 1e3, 1e6
	}
	if thresholdNs > 0 {
		lo, hi = math.Min(lo, float64(thresholdNs)), math.Max(hi, float64(thresholdNs))
	}
	ymin, ymax := logRange(lo, hi*1.5) // headroom: a threshold at the top edge stays readable
	c := &chart{
		id: id, title: title,
		x:     axis{min: 0, max: ts.end, label: axisTimeLabel, format: fmtSeconds},
		y:     axis{min: ymin, max: ymax, log: true, label: axisLatencyLabel, format: fmtLatency},
		bands: stalls(ts),
	}
	c.lines = append(c.lines, segments("p99", palette[0], ts, func(x stats.SecondSample) int64 { return x.P99Ns })...)
	c.lines = append(c.lines, segments("max", palette[1], ts, func(x stats.SecondSample) int64 { return x.MaxNs })...)
	if thresholdNs > 0 {
		c.hmarks = append(c.hmarks, mark{at: float64(thresholdNs), label: latencyLabel(float64(thresholdNs)) + " threshold", color: colorThreshold})
	}
	var notes []string
	if len(c.bands) > 0 {
		notes = append(notes, ts.stallNote(false))
	}
	if n := ts.partialNote(); n != "" {
		notes = append(notes, n)
	}
	c.note = strings.Join(notes, "; ")
	return c
}

// segments turns the drawn seconds with operations into polylines, each
// point in the middle of the time its second covers, broken at the seconds
// without any (a line must not bridge a stall). Only the first segment
// carries the name, so the legend lists it once.
func segments(name, color string, ts timeSeries, v func(stats.SecondSample) int64) []line {
	var out []line
	var cur [][2]float64
	flush := func() {
		if len(cur) > 0 {
			l := line{color: color, points: cur}
			if len(out) == 0 {
				l.name = name
			}
			out = append(out, l)
			cur = nil
		}
	}
	for _, x := range ts.drawn() {
		if x.Ops == 0 {
			flush()
			continue
		}
		from, to, _ := ts.span(x)
		cur = append(cur, [2]float64{(from + to) / 2, float64(v(x))})
	}
	flush()
	if len(out) == 0 {
		out = append(out, line{name: name, color: color})
	}
	return out
}

// rateOverTimeChart draws the operations completed in each second as bars,
// stalled seconds in red. A partial last second is drawn as wide as the
// time it covers, at the rate over that time, and paler.
func rateOverTimeChart(id string, wl *result.Workload, ts timeSeries) *chart {
	s := ts.drawn()
	if len(s) == 0 {
		return nil
	}
	_, rate := seriesLabels(wl)
	c := &chart{
		id: id, title: rate,
		x: axis{min: 0, max: ts.end, label: axisTimeLabel, format: fmtSeconds},
		// A stalled second has no bar to speak of: the band shows it.
		bands: stalls(ts),
	}
	st := map[int]bool{}
	for _, b := range c.bands {
		st[int(b[1])] = true
	}
	var notes []string
	top := 0.0
	for _, x := range s {
		from, to, share := ts.span(x)
		b := bar{x0: from, x1: to, y: float64(x.Ops) / share, color: palette[0], title: fmt.Sprintf("second %d: %d operations", x.T, x.Ops)}
		switch {
		case share < 1:
			b.faint = true
			b.title = fmt.Sprintf("the run's last %s: %s, %.0f/s", units.FormatDuration(units.FromSeconds(share)), operations(x.Ops), b.y)
			notes = append(notes, fmt.Sprintf("the paler last bar covers only the run's last %s, at its rate per second", units.FormatDuration(units.FromSeconds(share))))
		case st[x.T]:
			b.color = colorStall
			b.title += " (stall)"
		}
		top = math.Max(top, b.y)
		c.bars = append(c.bars, b)
	}
	ymax := top * 1.1
	if ymax <= 0 {
		ymax = 1
	}
	c.y = axis{min: 0, max: ymax, label: "per second", format: fmtCount}
	if wl.OpsPerSec > 0 {
		// In the legend: a label on the line would sit on the bars.
		c.hmarks = append(c.hmarks, mark{at: wl.OpsPerSec, label: fmt.Sprintf("mean %.0f/s", wl.OpsPerSec), color: colorAxis, inLegend: true})
	}
	if len(st) > 0 {
		notes = append([]string{ts.stallNote(true)}, notes...)
	}
	if n := ts.partialNote(); n != "" {
		notes = append(notes, n)
	}
	c.note = strings.Join(notes, "; ")
	return c
}

// latencySeriesCharts draws the per-second latency of every latency that
// has a series of its own (one that is not the workload's first).
func latencySeriesCharts(idPrefix string, wl *result.Workload) []*chart {
	var out []*chart
	for i := range wl.Latencies {
		l := &wl.Latencies[i]
		if len(l.Series) == 0 {
			continue
		}
		ts := newTimeSeries(l.Series, wl.DurationNs, l.Name)
		ts.sporadic = true
		if c := latencyOverTimeChart(fmt.Sprintf("%s-%s-time", idPrefix, slug(l.Name)), l.Name+" latency per second", ts, thresholdOf(wl, l)); c != nil {
			out = append(out, c)
		}
	}
	return out
}
