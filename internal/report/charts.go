package report

import (
	"fmt"
	"math"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
)

// cdfCurve is one latency distribution drawn on a CDF chart.
type cdfCurve struct {
	name string
	h    *hdr.Histogram
}

// ninesTicks labels the CDF's y axis: 0 %, 90 %, 99 %, 99.9 %...
func ninesTicks(n int) ([]float64, []string) {
	ticks := []float64{0}
	text := []string{"0 %"}
	label := "9"
	for k := 1; k <= n; k++ {
		ticks = append(ticks, float64(k))
		if k == 1 {
			text = append(text, "90 %")
			continue
		}
		label += "9"
		if k == 2 {
			text = append(text, "99 %")
			continue
		}
		text = append(text, label[:2]+"."+label[2:]+" %")
	}
	return ticks, text
}

// cdfPoints samples h's cumulative distribution: x is the latency, y the
// number of nines of the fraction at or below it (90 % -> 1, 99 % -> 2), so
// that the tail, where etcd's p99 lives, gets as much room as the body.
func cdfPoints(h *hdr.Histogram, maxNines int) [][2]float64 {
	n := float64(h.TotalCount())
	if n == 0 {
		return nil
	}
	var pts [][2]float64
	add := func(p float64) { // p in percent
		y := -math.Log10(1 - p/100)
		if p >= 100 || y > float64(maxNines) {
			y = float64(maxNines)
		}
		pts = append(pts, [2]float64{float64(h.ValueAtPercentile(p)), y})
	}
	pts = append(pts, [2]float64{float64(h.Min()), 0})
	for p := 1.0; p < 90; p++ {
		add(p)
	}
	for k := percentileStepsPerDecade; k <= maxNines*percentileStepsPerDecade; k++ {
		tail := math.Pow(10, -float64(k)/percentileStepsPerDecade)
		if tail*n < 1 { // beyond what this many samples can tell
			break
		}
		add(100 * (1 - tail))
	}
	pts = append(pts, [2]float64{float64(h.Max()), math.Min(math.Log10(n), float64(maxNines))})
	return pts
}

// cdfChart draws the latency CDFs of curves on a log latency axis with the
// threshold (ns, 0 for none) as a vertical line and p99 as a horizontal one.
func cdfChart(id, title string, curves []cdfCurve, thresholdNs int64) *chart {
	lo, hi := math.Inf(1), 0.0
	var most int64
	for _, c := range curves {
		if c.h.TotalCount() == 0 {
			continue
		}
		lo, hi = math.Min(lo, float64(c.h.Min())), math.Max(hi, float64(c.h.Max()))
		most = max(most, c.h.TotalCount())
	}
	if most == 0 {
		return nil
	}
	if thresholdNs > 0 {
		lo, hi = math.Min(lo, float64(thresholdNs)), math.Max(hi, float64(thresholdNs))
	}
	// At least 99.9 %: the p99 line is never the top edge, where its label
	// would sit in the corner.
	nines := int(math.Ceil(math.Log10(float64(most))))
	nines = max(3, min(nines, cdfNinesMax))
	ticks, text := ninesTicks(nines)
	xmin, xmax := logRange(lo, hi)
	c := &chart{
		id: id, title: title,
		x: axis{min: xmin, max: xmax, log: true, label: axisLatencyLabel, format: fmtLatency},
		y: axis{min: 0, max: float64(nines), label: "operations at or below", format: fmtCount, ticks: ticks, tickText: text},
	}
	for i, cv := range curves {
		c.lines = append(c.lines, line{name: cv.name, color: palette[i%len(palette)], points: cdfPoints(cv.h, nines)})
	}
	c.hmarks = append(c.hmarks, mark{at: 2, label: "p99", color: colorAxis})
	if thresholdNs > 0 {
		c.vmarks = append(c.vmarks, mark{at: float64(thresholdNs), label: latencyLabel(float64(thresholdNs)) + " threshold", color: colorThreshold})
	}
	return c
}

// histogramChart draws how many operations fell in each latency range,
// ten ranges per decade, on log scales: a single slow outlier stays visible
// next to ten thousand fast operations.
func histogramChart(id, title string, h *hdr.Histogram, thresholdNs int64) *chart {
	if h.TotalCount() == 0 {
		return nil
	}
	lo, hi := float64(h.Min()), float64(h.Max())
	if thresholdNs > 0 {
		hi = math.Max(hi, float64(thresholdNs))
	}
	xmin, xmax := logRange(lo, hi)
	nbins := int(math.Round(math.Log10(xmax/xmin))) * histogramBinsPerDecade
	counts := make([]int64, nbins)
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		v := float64(b.From+b.To) / 2
		i := int(math.Floor(math.Log10(math.Max(v, xmin)/xmin) * histogramBinsPerDecade))
		i = max(0, min(i, nbins-1))
		counts[i] += b.Count
	}
	var top int64
	for _, n := range counts {
		top = max(top, n)
	}
	_, ymax := logRange(1, float64(top))
	c := &chart{
		id: id, title: title,
		x: axis{min: xmin, max: xmax, log: true, label: axisLatencyLabel, format: fmtLatency},
		y: axis{min: 0.5, max: ymax, log: true, label: "operations (log scale)", format: fmtCount, ticks: decadeTicks(1, ymax)},
	}
	for i, n := range counts {
		if n == 0 {
			continue
		}
		x0 := xmin * math.Pow(10, float64(i)/histogramBinsPerDecade)
		x1 := xmin * math.Pow(10, float64(i+1)/histogramBinsPerDecade)
		color := palette[0]
		if thresholdNs > 0 && x0 >= float64(thresholdNs) {
			color = colorThreshold
		}
		c.bars = append(c.bars, bar{x0: x0, x1: x1, y: float64(n), color: color,
			title: fmt.Sprintf("%s between %s and %s", operations(n), latencyLabel(x0), latencyLabel(x1))})
	}
	if thresholdNs > 0 {
		c.vmarks = append(c.vmarks, mark{at: float64(thresholdNs), label: latencyLabel(float64(thresholdNs)) + " threshold", color: colorThreshold})
	}
	return c
}

// memberMetric is one of etcd's own disk histograms that the members chart
// shows, with the threshold it is judged against.
type memberMetric struct {
	suffix, label string
	thresholdNs   int64
}

var memberMetrics = []memberMetric{
	{"_wal_fsync_p99", "WAL fsync", 10e6},
	{"_backend_commit_p99", "backend commit", 25e6},
	{"_apply_p99", "apply", 0},
}

// membersChart draws each etcd member's own WAL fsync, backend commit and
// apply p99 (from its /metrics histograms) side by side, with the limits.
func membersChart(id string, wl *result.Workload) *chart {
	var members []string
	vals := map[string]map[string]float64{}
	for _, f := range wl.Figures {
		for _, m := range memberMetrics {
			if !strings.HasSuffix(f.Name, m.suffix) || f.Unit != "s" {
				continue
			}
			name := strings.TrimSuffix(f.Name, m.suffix)
			if vals[name] == nil {
				vals[name] = map[string]float64{}
				members = append(members, name)
			}
			vals[name][m.suffix] = f.Value * 1e9
		}
	}
	if len(members) == 0 {
		return nil
	}
	lo, hi := math.Inf(1), 25e6
	for _, mv := range vals {
		for _, v := range mv {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	ymin, ymax := logRange(lo, hi)
	c := &chart{
		id: id, title: "members' own p99s (/metrics)",
		x: axis{min: 0, max: float64(len(members)), format: fmtSeconds}, // the ticks name the members
		y: axis{min: ymin, max: ymax, log: true, label: axisLatencyLabel, format: fmtLatency},
	}
	for i, name := range members {
		c.x.ticks = append(c.x.ticks, float64(i)+0.5)
		c.x.tickText = append(c.x.tickText, memberLabel(name))
	}
	if len(members) == 1 {
		c.title = "own p99s of " + memberLabel(members[0]) + " (/metrics)"
	}
	w := 0.8 / float64(len(memberMetrics))
	for j, m := range memberMetrics {
		color := palette[j%len(palette)]
		c.lines = append(c.lines, line{name: m.label, color: color}) // legend only
		for i, name := range members {
			v, ok := vals[name][m.suffix]
			if !ok || v <= 0 {
				continue
			}
			x0 := float64(i) + 0.1 + float64(j)*w
			c.bars = append(c.bars, bar{x0: x0, x1: x0 + w, y: v, color: color, title: fmt.Sprintf("%s %s p99: %s", memberLabel(name), m.label, latencyLabel(v))})
		}
		if m.thresholdNs > 0 {
			c.hmarks = append(c.hmarks, mark{at: float64(m.thresholdNs), label: latencyLabel(float64(m.thresholdNs)) + " " + m.label + " p99 limit", color: colorThreshold})
		}
	}
	return c
}

// memberLabel names a members chart's group from its figures' prefix:
// "member0" is member 0; "members", from etcdbench versions whose
// embedded members shared one process and so one /metrics, is all of them
// together.
func memberLabel(prefix string) string {
	if n, ok := strings.CutPrefix(prefix, "member"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
		return "member " + n
	}
	if prefix == "members" {
		return "all members together"
	}
	return prefix
}

// thresholdOf returns the latency threshold a workload's latency is judged
// against, in ns, or 0.
func thresholdOf(wl *result.Workload, l *result.Latency) int64 {
	if l.Exceedance != nil {
		return l.Exceedance.ThresholdNs
	}
	if l == &wl.Latencies[0] {
		return intParam(wl.Parameters, "threshold_ns")
	}
	return 0
}

// workloadCharts returns the charts of one workload, skipping those it has
// no data for. Undecodable histograms are reported, not hidden.
func workloadCharts(idPrefix string, wl *result.Workload) ([]*chart, error) {
	var out []*chart
	add := func(c *chart) {
		if c != nil {
			out = append(out, c)
		}
	}
	var firstThreshold int64
	for i := range wl.Latencies {
		l := &wl.Latencies[i]
		if l.Count == 0 || l.Histogram.Data == "" {
			continue
		}
		h, err := stats.Decode(l.Histogram)
		if err != nil {
			return nil, fmt.Errorf("workload %s, latency %s: %w", wl.Name, l.Name, err)
		}
		th := thresholdOf(wl, l)
		if i == 0 {
			firstThreshold = th
		}
		id := fmt.Sprintf("%s-%s", idPrefix, slug(l.Name))
		add(cdfChart(id+"-cdf", l.Name+" latency CDF", []cdfCurve{{name: l.Name, h: h}}, th))
		add(histogramChart(id+"-hist", l.Name+" latency histogram", h, th))
	}
	if len(wl.Series) > 0 {
		op, _ := seriesLabels(wl)
		ts := newTimeSeries(wl.Series, wl.DurationNs, "the workload")
		add(latencyOverTimeChart(idPrefix+"-latency-time", op+" latency per second", ts, firstThreshold))
		add(rateOverTimeChart(idPrefix+"-rate-time", wl, ts))
	}
	for _, c := range latencySeriesCharts(idPrefix, wl) {
		add(c)
	}
	add(membersChart(idPrefix+"-members", wl))
	add(dataChart(idPrefix+"-data", wl))
	add(dataMemoryChart(idPrefix+"-memory", wl))
	for _, c := range capacityCharts(idPrefix, wl) {
		add(c)
	}
	return out, nil
}

// slug makes a string safe for an HTML id.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// operations counts n operations in words: "1 operation", "2 operations".
func operations[N int | int64 | uint64](n N) string {
	if n == 1 {
		return "1 operation"
	}
	return fmt.Sprintf("%d operations", n)
}
