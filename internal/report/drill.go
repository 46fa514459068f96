package report

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// drillHead is the head of the table of faults, text and HTML.
var drillHead = []string{"fault", "outage", "new leader", "elections", "failed", "slow", "late until", "p99 during", "restart", "verdict"}

// drillHeadline is a drill's answer: the longest outage and what it
// puts at risk, one line; "" for a result with no drill.
func drillHeadline(wls []result.Workload) string {
	var worst *result.Workload
	status := verdict.Pass
	for i := range wls {
		d := wls[i].Drill
		if d == nil {
			continue
		}
		if worst == nil || d.OutageSeconds > worst.Drill.OutageSeconds {
			worst = &wls[i]
		}
		status = max(status, verdict.Worst(wls[i].Verdicts))
	}
	if worst == nil {
		return ""
	}
	d := worst.Drill
	what := "every Kubernetes lease kept, the apiserver's writes within their SLO"
	if status != verdict.Pass {
		var broke []string
		for _, wl := range wls {
			for _, v := range wl.Verdicts {
				if wl.Drill != nil && v.Status != verdict.Pass {
					broke = append(broke, wl.Drill.Fault+": "+v.Title)
				}
			}
		}
		what = strings.Join(broke, "; ")
	}
	return fmt.Sprintf("%s  drill: the longest write outage %s (%s); %s", status, units.FormatValue(d.OutageSeconds, "s"), d.Fault, what)
}

// drillRows are the faults' medians, a row each.
func drillRows(wls []result.Workload) [][]string {
	var rows [][]string
	for _, wl := range wls {
		d := wl.Drill
		if d == nil {
			continue
		}
		sec := func(v float64) string { return units.FormatValue(v, "s") }
		outage := sec(d.OutageSeconds)
		if d.OutageOpen {
			outage = "≥" + outage
		}
		restart := "-"
		if d.RestartSeconds > 0 {
			restart = sec(d.RestartSeconds)
		}
		rows = append(rows, []string{d.Fault, outage, sec(d.NewLeaderSeconds), trimZero(d.Elections), trimZero(d.FailedRequests), trimZero(d.SlowRequests),
			sec(d.LateUntilSeconds), sec(d.P99DuringSeconds), restart, verdict.Worst(wl.Verdicts).String()})
	}
	return rows
}

// textDrill opens a drill's report with its headline and the faults'
// table.
func textDrill(ew *errWriter, wls []result.Workload) {
	head := drillHeadline(wls)
	if head == "" {
		return
	}
	ew.printf("%s\n", head)
	rounds := 0
	for _, wl := range wls {
		if wl.Drill != nil {
			rounds = wl.Drill.Rounds
		}
	}
	ew.printf("  what clients saw, the median of %d round(s) per fault:\n", rounds)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  %s\n", strings.Join(drillHead, "\t"))
	for _, r := range drillRows(wls) {
		fmt.Fprintf(tw, "  %s\n", strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
	ew.printf("\n")
}

// drillTimelineChart draws the first round's puts around the fault: each
// slice's p99 and slowest put from its due time, the slices with failed
// puts shaded, and the fault, the new leader and the outage's end marked.
func drillTimelineChart(id string, d *result.Drill) *chart {
	if len(d.Timeline) == 0 || len(d.Runs) == 0 {
		return nil
	}
	step := float64(d.TimelineStepNs) / 1e9
	lo, hi := math.Inf(1), 0.0
	var p99, mx []line
	var cur99, curMax [][2]float64
	flush := func() {
		if len(cur99) > 0 {
			p99 = append(p99, line{color: palette[0], points: cur99})
			mx = append(mx, line{color: palette[1], points: curMax})
		}
		cur99, curMax = nil, nil
	}
	var bands [][2]float64
	for _, s := range d.Timeline {
		x := float64(s.StartNs) / 1e9
		if s.Failed > 0 {
			bands = append(bands, [2]float64{x, x + step})
		}
		if s.Puts == s.Failed {
			flush()
			continue
		}
		cur99 = append(cur99, [2]float64{x + step/2, float64(s.P99Ns)})
		curMax = append(curMax, [2]float64{x + step/2, float64(s.MaxNs)})
		lo, hi = math.Min(lo, float64(s.P99Ns)), math.Max(hi, float64(s.MaxNs))
	}
	flush()
	if hi == 0 {
		return nil
	}
	p99[0].name, mx[0].name = "p99", "slowest"
	slow := float64(time.Duration(500 * time.Millisecond).Nanoseconds())
	ymin, ymax := logRange(math.Min(lo, slow), math.Max(hi, slow)*1.5)
	first, last := float64(d.Timeline[0].StartNs)/1e9, float64(d.Timeline[len(d.Timeline)-1].StartNs)/1e9+step
	r := d.Runs[0]
	c := &chart{
		id: id, title: d.Fault + ": put latency around the fault (round 1)",
		x:     axis{min: first, max: last, label: "seconds from the fault", format: fmtSeconds},
		y:     axis{min: ymin, max: ymax, log: true, label: "latency from the due time (log scale)", format: fmtLatency},
		lines: append(p99, mx...), bands: bands,
		hmarks: []mark{{at: slow, label: "0.5 s slow put", color: colorThreshold}},
		vmarks: []mark{{at: 0, label: "fault (" + r.Leader + ")", color: colorAxis}},
		note:   "red: slices with failed puts; each point is the puts due in a " + units.FormatDuration(time.Duration(d.TimelineStepNs)) + " slice",
	}
	if r.NewLeaderSeconds > 0 && r.NewLeader != r.Leader {
		c.vmarks = append(c.vmarks, mark{at: r.NewLeaderSeconds, label: "new leader " + r.NewLeader, color: palette[2], inLegend: true})
	}
	return c
}

// drillRunTable is a fault's rounds, a row each.
func drillRunTable(d *result.Drill) htmlTable {
	t := htmlTable{Title: "each round", Head: []string{"round", "leader", "new leader", "outage", "new leader after", "elections", "failed", "slow", "p99 before", "p99 during", "p99 after"}}
	sec := func(v float64) string { return units.FormatValue(v, "s") }
	for i, r := range d.Runs {
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), r.Leader, r.NewLeader, sec(r.OutageSeconds), sec(r.NewLeaderSeconds), fmt.Sprint(r.Elections),
			fmt.Sprint(r.FailedRequests), fmt.Sprint(r.SlowRequests), sec(r.P99BeforeSeconds), sec(r.P99DuringSeconds), sec(r.P99AfterSeconds)})
	}
	return t
}
