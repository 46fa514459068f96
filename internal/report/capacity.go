package report

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// CapacitySummary is a capacity sweep's answer in one line: the rate it
// carries, how sure, and the reference loads carried and not.
func CapacitySummary(c *result.Capacity) string {
	var b strings.Builder
	switch {
	case c.Rate == 0 && c.Upper > 0:
		fmt.Fprintf(&b, "carries less than %s %s", fmtRate(c.Upper), c.Unit)
	case c.Upper == 0 && c.UndecidedAbove() > 0:
		fmt.Fprintf(&b, "carries at least %s %s; the step at %s was not decided, so it is not carried", fmtRate(c.Rate), c.Unit, fmtRate(c.UndecidedAbove()))
	case c.Upper == 0 && len(undecidedSteps(c)) > 0:
		// A step below the answer that was not decided did not pass, and
		// the answer stands on the steps above it.
		u := undecidedSteps(c)
		rates := make([]string, len(u))
		for i, r := range u {
			rates[i] = fmtRate(r)
		}
		fmt.Fprintf(&b, "carries at least %s %s, every decided step passed; %d undecided, at %s %s", fmtRate(c.Rate), c.Unit, len(u), strings.Join(rates, ", "), c.Unit)
	case c.Upper == 0:
		fmt.Fprintf(&b, "carries at least %s %s, every step passed", fmtRate(c.Rate), c.Unit)
	default:
		fmt.Fprintf(&b, "carries %s-%s %s", fmtRate(c.Rate), fmtRate(c.Upper), c.Unit)
	}
	switch {
	case c.StepConfidence == 0:
		b.WriteString(" (each step judged by its rules over its whole length)")
	case c.Decided:
		fmt.Fprintf(&b, " (decided at %.0f %% overall, each step at %.2f %%)", 100*c.Confidence, 100*c.StepConfidence)
	default:
		fmt.Fprintf(&b, " (not all decided at %.0f %% overall, each step at %.2f %%)", 100*c.Confidence, 100*c.StepConfidence)
	}
	if len(c.Marks) > 0 {
		b.WriteString("; " + marksCarried(c.Marks, c.Upper))
	}
	if s := SizesFitted(c.Sizes); s != "" {
		b.WriteString("; " + s)
	}
	return b.String()
}

// marksCarried says which of check perf's loads a capacity carries, the
// marks' Carried set; upper is its lowest failing rate (0: none failed).
func marksCarried(marks []result.CapacityMark, upper float64) string {
	var yes, no []string
	for _, m := range marks {
		if m.Carried {
			yes = append(yes, m.Name)
		} else {
			no = append(no, m.Name)
		}
	}
	switch {
	case len(no) == 0:
		return fmt.Sprintf("check perf loads: carries all (%s)", strings.Join(yes, ", "))
	case len(yes) == 0:
		return fmt.Sprintf("check perf loads: carries none, not even %s", no[0])
	case upper == 0:
		// Nothing failed: the loads above the highest rate tried were
		// not tried, not failed.
		return fmt.Sprintf("check perf loads: carries %s; %s above the rates tried", yes[len(yes)-1], no[0])
	}
	return fmt.Sprintf("check perf loads: carries %s, not %s", yes[len(yes)-1], no[0])
}

// EstimateHeadline is the one answer to "how much" of a run whose disk
// sweep c has the estimate: the put rate an etcd on this storage and
// machine carries and what limits it, the check perf loads it carries
// (c's marks, judged at the estimate's rate), then the two sides as its
// evidence.
func EstimateHeadline(c *result.Capacity) string {
	e := c.Etcd
	marks := make([]result.CapacityMark, len(c.Marks))
	for i, m := range c.Marks {
		m.Carried = e.Rate >= m.Rate
		marks[i] = m
	}
	s := EstimateSummary(e)
	if len(marks) > 0 {
		s += "; " + marksCarried(marks, e.Upper)
	}
	if e.WithoutDiskModel {
		return s + fmt.Sprintf(" (an embedded etcd on this storage %s puts/s; the disk's model did not run: etcdbench capacity runs it too)", rangeOf(e.CPURate, e.CPUUpper))
	}
	return s + fmt.Sprintf(" (the disk's model carries %s writes/s, an embedded etcd on this storage %s puts/s)", rangeOf(e.DiskRate, e.DiskUpper), rangeOf(e.CPURate, e.CPUUpper))
}

// rangeOf is a side's answer: "R-U", or "at least R" when nothing failed.
func rangeOf(rate, upper float64) string {
	if upper > 0 {
		return fmtRate(rate) + "-" + fmtRate(upper)
	}
	return "at least " + fmtRate(rate)
}

// undecidedSteps are the rates of the counted steps (neither a probe nor
// a retried one) that were not decided and did not fail, in sweep order.
func undecidedSteps(c *result.Capacity) []float64 {
	var rates []float64
	for _, s := range c.Steps {
		if s.Phase != "probe" && s.Phase != "retried" && !s.Decided && s.Status != verdict.Fail {
			rates = append(rates, s.Rate)
		}
	}
	return rates
}

// SizesFitted says which cluster sizes of etcd's hardware guide a rate
// fits, counting every request as a write, or "" without sizes.
func SizesFitted(sizes []result.CapacityMark) string {
	var last, next *result.CapacityMark
	for i := range sizes {
		switch m := &sizes[i]; {
		case m.Carried:
			last = m
		case next == nil:
			next = m
		}
	}
	const guide = "etcd's hardware guide (every request a write): fits "
	switch {
	case len(sizes) == 0:
		return ""
	case last == nil:
		return fmt.Sprintf("%sno cluster size, below %s's %s requests/s", guide, next.Name, fmtRate(next.Rate))
	case next == nil:
		return fmt.Sprintf("%s%s (%s requests/s) and above", guide, last.Name, fmtRate(last.Rate))
	}
	return fmt.Sprintf("%s%s (%s requests/s), not %s (%s)", guide, last.Name, fmtRate(last.Rate), next.Name, fmtRate(next.Rate))
}

// EstimateSummary is the put rate an etcd on this disk and machine is
// expected to sustain, in one line.
func EstimateSummary(e *result.CapacityEstimate) string {
	r := "at least " + fmtRate(e.Rate)
	if e.Upper > 0 {
		r = fmtRate(e.Rate) + "-" + fmtRate(e.Upper)
	}
	if e.PassedAbove > 0 {
		return fmt.Sprintf("etcd on this disk and machine: unstable, %s-%s puts/s (carried %s, failed at %s, carried %s above it), limited by %s",
			fmtRate(e.Rate), fmtRate(e.PassedAbove), fmtRate(e.Rate), fmtRate(e.Upper), fmtRate(e.PassedAbove), e.LimitedBy)
	}
	return fmt.Sprintf("etcd on this disk and machine: %s puts/s, limited by %s", r, e.LimitedBy)
}

// ClusterSummary is a row of members put apart in one line: what they
// carried on this machine, their puts' latency there, and the prediction
// for as many machines like this one.
func ClusterSummary(r *result.ClusterCapacity) string {
	apart := fmt.Sprintf("%d members %v apart", r.Members, time.Duration(r.PeerRTTNs))
	if r.PeerRTTNs == 0 {
		apart = fmt.Sprintf("%d members, no round trip added", r.Members)
	}
	for i, d := range r.MemberRTTNs {
		if d > 0 {
			apart += fmt.Sprintf(", member %d %v from the others", i+1, time.Duration(d))
		}
	}
	s := fmt.Sprintf("%s, on this machine: %s puts/s, limited by %s", apart, rangeOf(r.Rate, r.Upper), r.LimitedBy)
	if r.RequestP99Ns > 0 {
		s += fmt.Sprintf(" (puts p50 %s, p99 %s there)", units.FormatDuration(time.Duration(r.RequestP50Ns)), units.FormatDuration(time.Duration(r.RequestP99Ns)))
	}
	if m := r.Machines; m != nil {
		s += fmt.Sprintf("; predicted on %d machines like this one: %s, limited by %s", r.Members, PredictionWords(m), m.LimitedBy)
	}
	return s
}

// PredictionWords is a prediction's rate in words: "up to B puts/s"
// when the round trip's bound sets it, else the single member's answer.
func PredictionWords(p *result.ClusterPrediction) string {
	if p.LimitedBy == finding.Network {
		return "up to " + fmtRate(p.Rate) + " puts/s"
	}
	return rangeOf(p.Rate, p.Upper) + " puts/s"
}

func fmtRate(r float64) string {
	if r >= 10_000 {
		// 14.7k, not 15k: a rounded-up rate would claim one not tried.
		return strings.TrimSuffix(fmt.Sprintf("%.1f", math.Floor(r/100)/10), ".0") + "k"
	}
	return fmt.Sprintf("%.0f", r)
}

// textCapacity prints a sweep: the answer, what bends the curve, and the
// curve as a table in rate order.
func textCapacity(ew *errWriter, c *result.Capacity) {
	ew.printf("  %s\n", CapacitySummary(c))
	ew.printf("  criterion: %s\n", c.Criterion)
	if c.FailedRule != "" {
		ew.printf("  failed first at %s/s: %s\n", fmtRate(c.Upper), c.FailedRule)
	}
	ew.printf("  what bends it: %s: %s\n", c.Bend, c.Evidence)
	if e := c.Etcd; e != nil {
		ew.printf("  %s: %s\n", EstimateSummary(e), e.Evidence)
	}
	if r := c.Cluster; r != nil {
		ew.printf("  %s\n    %s\n", ClusterSummary(r), r.Evidence)
		if m := r.Machines; m != nil {
			ew.printf("    %s\n", m.Evidence)
		}
	}
	if v := VolumeSummary(c); v != "" {
		ew.printf("  %s\n", v)
	}
	if c.Interrupted {
		ew.printf("  INTERRUPTED after %d steps: the answer is only as far as they went\n", len(c.Steps))
	}
	ew.printf("\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  step\trate/s\tkept/s\tsync p50\tsync p99\tcommit p50\tcommit p99\tbackend p99\tsyncs/s\tper sync\tbytes/sync\tbacklog max\ttime\tverdict\t\n")
	for _, i := range stepOrder(c.Steps) {
		s := c.Steps[i]
		d := func(ns int64) string { return units.FormatDuration(time.Duration(ns)) }
		status := s.Status.String()
		if !s.Decided && s.Status != verdict.Fail {
			status += " (undecided: not carried)"
		}
		if s.HeldFromNs > 0 {
			status += " (held: its " + units.FormatDuration(time.Duration(s.HeldFromNs)) + " step's p99 came from too few observations)"
		}
		fmt.Fprintf(tw, "  %d %s\t%.0f\t%.0f\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.1f\t%.0f\t%.0f\t%s\t%s\t\n",
			i+1, s.Phase, s.Rate, s.Achieved, d(s.SyncP50Ns), d(s.SyncP99Ns), d(s.CommitP50Ns), d(s.CommitP99Ns), backendP99(s),
			s.SyncsPerSec, s.EntriesPerSync, s.BytesPerSync, s.BacklogMax, units.FormatDuration(time.Duration(s.DurationNs).Round(time.Millisecond)), status)
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
	for _, s := range c.Steps {
		if s.BackendCommitTimed {
			ew.printf("  backend p99 (timed): the commits as timed around each, not etcd's own histogram of them (another etcd backend in this process counted there too)\n")
			break
		}
	}
	for _, t := range capacityTables(c) {
		ew.printf("\n  %s\n", t.Title)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  %s\t\n", strings.Join(t.Head, "\t"))
		for _, r := range t.Rows {
			fmt.Fprintf(tw, "  %s\t\n", strings.Join(r, "\t"))
		}
		if err := tw.Flush(); err != nil && ew.err == nil {
			ew.err = err
		}
		if t.Note != "" {
			ew.printf("  %s\n", t.Note)
		}
	}
	for _, i := range stepOrder(c.Steps) {
		var parts []string
		for _, f := range c.Steps[i].Extra {
			parts = append(parts, f.Name+" "+units.FormatValue(f.Value, f.Unit))
		}
		if len(parts) > 0 {
			ew.printf("  step %d: %s\n", i+1, strings.Join(parts, ", "))
		}
	}
}

// costFrom names the step whose cost per put a budget used; a rate over
// twice that step's is costed high (batches grow with the rate), so the
// budget is an upper bound.
func costFrom(b result.CapacityBudget) string {
	if b.Rate > 2*b.CostFrom {
		return fmtRate(b.CostFrom) + "/s (upper bound)"
	}
	return fmtRate(b.CostFrom) + "/s"
}

func backendP99(s result.CapacityStep) string {
	if s.BackendCommits == 0 {
		return "-"
	}
	p99 := units.FormatDuration(time.Duration(s.BackendCommitP99Ns))
	if s.BackendCommitTimed {
		return p99 + " (timed)"
	}
	return p99
}

// VolumeSummary says what the volume gives and what each check perf load
// needs, when a cap on the device's writes bent the curve: "this volume
// gives about 1000 write IOPS; load s needs about 480, m about 1900, ...",
// or "".
func VolumeSummary(c *result.Capacity) string {
	if c.Volume == nil {
		return ""
	}
	var needs []string
	for _, b := range c.Budgets {
		if b.Kind == "check-perf" {
			if len(needs) == 0 {
				needs = append(needs, fmt.Sprintf("load %s needs about %s", b.Name, fmtRate(math.Round(b.WriteIOPS))))
			} else {
				needs = append(needs, fmt.Sprintf("%s about %s", b.Name, fmtRate(math.Round(b.WriteIOPS))))
			}
		}
	}
	s := fmt.Sprintf("this volume gives about %s write IOPS (%s/s)", fmtRate(math.Round(c.Volume.WriteIOPS)), units.FormatBytes(int64(c.Volume.WriteBytesPerSec)))
	if b := c.Volume.BurstWriteIOPS; b > 0 {
		s += fmt.Sprintf(" sustained, up to %s while its burst lasts", fmtRate(math.Round(b)))
	}
	if len(needs) > 0 {
		s += "; " + strings.Join(needs, ", ")
	}
	return s + " (" + c.Volume.Evidence + ")"
}

// capacityTables are a sweep's device cost per put at each step and the
// budgets a volume needs for each reference load, for the text and HTML
// reports; none without device figures.
func capacityTables(c *result.Capacity) []htmlTable {
	var out []htmlTable
	cost := htmlTable{
		Title: "device cost at each step (the device's own counters: other writers and the filesystem's journal included)",
		Head:  []string{"step", "rate/s", "writes/s", "written/s", "flushes/s", "writes/put", "bytes/put", "flushes/put", "writes/sync", "bytes/sync", "max batch", "backend commits"},
	}
	for _, i := range stepOrder(c.Steps) {
		s := c.Steps[i]
		d := s.Device
		if d == nil {
			continue
		}
		cost.Rows = append(cost.Rows, []string{
			fmt.Sprintf("%d %s", i+1, s.Phase), fmtRate(s.Rate), fmt.Sprintf("%.0f", d.WriteIOPS), units.FormatBytes(int64(d.WriteBytesPerSec)),
			fmt.Sprintf("%.0f", d.FlushesPerSec), fmt.Sprintf("%.2f", d.WritesPerEntry), units.FormatBytes(int64(d.BytesPerEntry)),
			fmt.Sprintf("%.2f", d.FlushesPerEntry), fmt.Sprintf("%.2f", d.WritesPerEntry*s.EntriesPerSync),
			units.FormatBytes(int64(d.BytesPerEntry * s.EntriesPerSync)), fmt.Sprint(s.MaxBatch), fmt.Sprint(s.BackendCommits),
		})
	}
	if len(cost.Rows) > 0 {
		out = append(out, cost)
	}
	if len(c.Budgets) == 0 {
		return out
	}
	budget := htmlTable{
		Title: "the volume each load needs (its rate times the device cost per put of the passing step nearest it)",
		Head:  []string{"load", "puts/s", "write IOPS", "write MB/s", "flushes/s", "WAL sync p99", "backend commit p99", "cost from", "this volume"},
		Note:  "Cloud volumes are sold in write IOPS and MB/s; a volume needs both, and its syncs within the latencies, at the load's rate. The cost per put falls as the rate rises (more puts share each sync and each backend commit), so a rate well above the steps that passed is costed at the highest, an upper bound.",
	}
	for _, b := range c.Budgets {
		fits := "-"
		if b.Fits != nil {
			fits = map[bool]string{true: "gives it", false: "too few IOPS"}[*b.Fits]
		}
		name := b.Name
		if b.Kind == "check-perf" {
			name = "check perf " + b.Name
		}
		budget.Rows = append(budget.Rows, []string{
			name, fmtRate(b.Rate), fmt.Sprintf("%.0f", b.WriteIOPS), fmt.Sprintf("%.1f", b.WriteBytesPerSec/1e6), fmt.Sprintf("%.0f", b.FlushesPerSec),
			"< " + units.FormatDuration(time.Duration(b.SyncP99Ns)), "< " + units.FormatDuration(time.Duration(b.CommitP99Ns)),
			costFrom(b), fits,
		})
	}
	return append(out, budget)
}

// stepOrder is the steps' indices by offered rate.
func stepOrder(steps []result.CapacityStep) []int {
	idx := make([]int, len(steps))
	for i := range idx {
		idx[i] = i
	}
	for i := 1; i < len(idx); i++ { // insertion sort: a dozen steps
		for j := i; j > 0 && steps[idx[j]].Rate < steps[idx[j-1]].Rate; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return idx
}

// capacityCharts draws a sweep: latency against offered rate with the
// limit and the knee, and syncs per second against it (flat under a
// rate cap).
func capacityCharts(idPrefix string, wl *result.Workload) []*chart {
	c := wl.Capacity
	if c == nil || len(c.Steps) == 0 {
		return nil
	}
	order := stepOrder(c.Steps)
	rlo, rhi := math.Inf(1), 0.0
	llo, lhi := math.Inf(1), 0.0
	for _, s := range c.Steps {
		rlo, rhi = math.Min(rlo, s.Rate), math.Max(rhi, s.Rate)
		for _, v := range []int64{s.SyncP50Ns, s.SyncP99Ns, s.CommitP99Ns, s.BackendCommitP99Ns} {
			if v > 0 {
				llo, lhi = math.Min(llo, float64(v)), math.Max(lhi, float64(v))
			}
		}
	}
	limit := float64(intParam(wl.Parameters, "threshold_ns"))
	if limit > 0 {
		lhi = math.Max(lhi, limit)
		llo = math.Min(llo, limit)
	}
	if math.IsInf(llo, 1) {
		return nil
	}
	xmin, xmax := logRange(rlo, rhi)
	ymin, ymax := logRange(llo, lhi)
	rateAxis := axis{min: xmin, max: xmax, log: true, label: "offered rate (" + c.Unit + ", log scale)", format: fmtCount}
	lat := &chart{
		id: idPrefix + "-capacity-latency", title: "latency at each offered rate",
		x: rateAxis, y: axis{min: ymin, max: ymax, log: true, label: axisLatencyLabel, format: fmtLatency},
	}
	series := []struct {
		name   string
		v      func(result.CapacityStep) int64
		dashed bool
	}{
		{"fdatasync p50", func(s result.CapacityStep) int64 { return s.SyncP50Ns }, false},
		{"fdatasync p99", func(s result.CapacityStep) int64 { return s.SyncP99Ns }, false},
		{"entry commit p99", func(s result.CapacityStep) int64 { return s.CommitP99Ns }, true},
		{"backend commit p99", func(s result.CapacityStep) int64 { return s.BackendCommitP99Ns }, true},
	}
	for i, sr := range series {
		l := line{name: sr.name, color: palette[i%len(palette)], dashed: sr.dashed}
		for _, j := range order {
			if v := sr.v(c.Steps[j]); v > 0 {
				l.points = append(l.points, [2]float64{c.Steps[j].Rate, float64(v)})
			}
		}
		lat.lines = append(lat.lines, l)
	}
	if limit > 0 {
		lat.hmarks = append(lat.hmarks, mark{at: limit, label: latencyLabel(limit) + " limit", color: colorThreshold})
	}
	if c.Rate > 0 {
		lat.vmarks = append(lat.vmarks, mark{at: c.Rate, label: "knee: carries " + fmtRate(c.Rate) + "/s", color: colorAxis})
	}
	lat.note = CapacitySummary(c) + ". What bends it: " + c.Evidence
	if v := VolumeSummary(c); v != "" {
		lat.note += ". " + v
	}
	if e := c.Etcd; e != nil {
		lat.note += ". " + EstimateSummary(e) + ": " + e.Evidence
	}
	if r := c.Cluster; r != nil {
		lat.note += ". " + ClusterSummary(r) + ". " + r.Evidence
		if m := r.Machines; m != nil {
			lat.note += ". " + m.Evidence
		}
	}

	plo, phi := rlo, rhi
	for _, s := range c.Steps {
		dw := 0.0
		if s.Device != nil {
			dw = s.Device.WriteIOPS
		}
		for _, v := range []float64{s.SyncsPerSec, s.Achieved, dw} {
			if v > 0 {
				plo, phi = math.Min(plo, v), math.Max(phi, v)
			}
		}
	}
	pmin, pmax := logRange(plo, phi)
	rate := &chart{
		id: idPrefix + "-capacity-syncs", title: "syncs per second and entries kept at each offered rate",
		x: rateAxis, y: axis{min: pmin, max: pmax, log: true, label: "per second (log scale)", format: fmtCount},
	}
	syncs := line{name: "syncs/s", color: palette[0]}
	kept := line{name: "entries kept/s", color: palette[2], dashed: true}
	for _, j := range order {
		s := c.Steps[j]
		if s.SyncsPerSec > 0 {
			syncs.points = append(syncs.points, [2]float64{s.Rate, s.SyncsPerSec})
		}
		if s.Achieved > 0 {
			kept.points = append(kept.points, [2]float64{s.Rate, s.Achieved})
		}
	}
	rate.lines = []line{syncs, kept}
	dev := line{name: "device writes/s", color: palette[3%len(palette)]}
	for _, j := range order {
		if s := c.Steps[j]; s.Device != nil && s.Device.WriteIOPS > 0 {
			dev.points = append(dev.points, [2]float64{s.Rate, s.Device.WriteIOPS})
		}
	}
	if len(dev.points) > 0 {
		rate.lines = append(rate.lines, dev)
	}
	if v := c.Volume; v != nil {
		rate.hmarks = append(rate.hmarks, mark{at: v.WriteIOPS, label: fmt.Sprintf("the volume's cap: about %.0f write IOPS", v.WriteIOPS), color: colorThreshold})
		if v.BurstWriteIOPS > 0 {
			rate.hmarks = append(rate.hmarks, mark{at: v.BurstWriteIOPS, label: fmt.Sprintf("its burst: up to %.0f write IOPS", v.BurstWriteIOPS), color: colorAxis})
		}
	}
	if c.Rate > 0 {
		rate.vmarks = append(rate.vmarks, mark{at: c.Rate, label: "knee", color: colorAxis})
	}
	rate.note = "A rate cap shows as syncs per second (or the device's writes per second) flat while the offered rate rises; a rate the disk cannot keep, as entries kept per second falling below the offered rate."
	return []*chart{lat, rate}
}
