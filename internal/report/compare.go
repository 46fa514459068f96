package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// ErrMixedWorkloads is returned by NewComparison for results that did not
// run the same workloads: their figures cannot be set side by side.
var ErrMixedWorkloads = errors.New("the results ran different workloads")

// SimilarWithin is the relative difference under which two figures without
// a confidence interval are called similar rather than one better.
const SimilarWithin = 0.05

// Comparison sets several results of the same workloads side by side, the
// first being the baseline the deltas are computed against.
type Comparison struct {
	Runs []ComparedRun `json:"runs"`
	// Differences are the parameters that shape a workload and are not the
	// same in every run: the figures then differ for that reason too.
	Differences []ParamDifference `json:"parameter_differences"`
	Rows        []ComparedRow     `json:"rows"`
	r           []*result.Result
}

// ComparedRun names one of the compared results.
type ComparedRun struct {
	Label   string `json:"label"` // A, B, C...
	Source  string `json:"source"`
	Command string `json:"command"`
	Status  string `json:"status"`
}

// ComparedRow is one figure of every run.
type ComparedRow struct {
	Workload string    `json:"workload"`
	Figure   string    `json:"figure"`
	Unit     string    `json:"unit"`
	Values   []float64 `json:"values"`
	// Deltas are each run's relative difference from the first (0.1 is
	// 10 % more), NaN (null in JSON) for the first, for verdicts and when
	// the baseline is zero.
	Deltas DeltaList `json:"deltas"`
	// Better says which direction is better: "lower", "higher" or "" when
	// neither is (counts that are only context).
	Better string `json:"better,omitempty"`
	// Best is the label of the best run, "similar" when the differences are
	// within SimilarWithin or the confidence intervals overlap, "" when no
	// direction is better.
	Best   string `json:"best,omitempty"`
	Reason string `json:"reason,omitempty"` // why the runs are called similar
	ci     [][2]float64
}

// DeltaList is a row's relative differences; JSON has no NaN, so a delta
// that does not exist is written as null.
type DeltaList []float64

// MarshalJSON writes the deltas, null for NaN.
func (d DeltaList) MarshalJSON() ([]byte, error) {
	out := make([]*float64, len(d))
	for i := range d {
		if !math.IsNaN(d[i]) && !math.IsInf(d[i], 0) {
			out[i] = &d[i]
		}
	}
	return json.Marshal(out)
}

// NewComparison compares rs (sources name them, e.g. file names). They must
// have run the same workloads in the same order.
func NewComparison(rs []*result.Result, sources []string) (*Comparison, error) {
	if len(rs) < 2 {
		return nil, errors.New("compare needs at least two results")
	}
	want := workloadNames(rs[0])
	for i, r := range rs[1:] {
		if got := workloadNames(r); got != want {
			return nil, fmt.Errorf("%w: %s has %s, %s has %s; compare runs of the same command", ErrMixedWorkloads, sources[0], want, sources[i+1], got)
		}
	}
	c := &Comparison{r: rs, Differences: []ParamDifference{}}
	for i, r := range rs {
		c.Runs = append(c.Runs, ComparedRun{Label: string(rune('A' + i%26)), Source: sources[i], Command: CommandLine(r.Tool.Args), Status: statusText(r)})
	}
	for w := range rs[0].Workloads {
		c.addDifferences(w)
		c.addWorkload(w)
	}
	for i := range c.Rows {
		c.Rows[i].decide(c.Runs)
	}
	return c, nil
}

func workloadNames(r *result.Result) string {
	var n []string
	for _, w := range r.Workloads {
		n = append(n, w.Name)
	}
	return strings.Join(n, ",")
}

func (c *Comparison) addWorkload(w int) {
	name := c.r[0].Workloads[w].Name
	get := func(f func(*result.Workload) (float64, bool)) ([]float64, bool) {
		vals := make([]float64, len(c.r))
		for i, r := range c.r {
			v, ok := f(&r.Workloads[w])
			if !ok {
				return nil, false
			}
			vals[i] = v
		}
		return vals, true
	}
	add := func(fig, unit, better string, f func(*result.Workload) (float64, bool)) *ComparedRow {
		vals, ok := get(f)
		if !ok {
			return nil
		}
		c.Rows = append(c.Rows, ComparedRow{Workload: name, Figure: fig, Unit: unit, Values: vals, Better: better})
		return &c.Rows[len(c.Rows)-1]
	}
	add("operations per second", "ops/s", "higher", func(wl *result.Workload) (float64, bool) { return wl.OpsPerSec, true })
	for _, l := range c.r[0].Workloads[w].Latencies {
		ln := l.Name
		for _, p := range []float64{50, 99, 99.9} {
			row := add(fmt.Sprintf("%s p%g", ln, p), "s", "lower", func(wl *result.Workload) (float64, bool) {
				if x := wl.Latency(ln); x != nil {
					v, ok := x.At(p)
					return float64(v) / 1e9, ok
				}
				return 0, false
			})
			if row != nil && p == 99 {
				for _, r := range c.r {
					if x := r.Workloads[w].Latency(ln); x != nil && x.P99CI != nil {
						row.ci = append(row.ci, [2]float64{float64(x.P99CI.LowerNs) / 1e9, float64(x.P99CI.UpperNs) / 1e9})
					}
				}
			}
		}
		add(ln+" max", "s", "lower", func(wl *result.Workload) (float64, bool) {
			if x := wl.Latency(ln); x != nil {
				return float64(x.MaxNs) / 1e9, true
			}
			return 0, false
		})
	}
	for _, f := range c.r[0].Workloads[w].Figures {
		fn := f.Name
		add(fn, f.Unit, figureDirection(f), func(wl *result.Workload) (float64, bool) {
			if x := wl.Figure(fn); x != nil {
				return x.Value, true
			}
			return 0, false
		})
	}
	for _, v := range c.r[0].Workloads[w].Verdicts {
		check := v.Check
		add("verdict "+check, "status", "lower", func(wl *result.Workload) (float64, bool) {
			for _, x := range wl.Verdicts {
				if x.Check == check {
					return float64(x.Status), true
				}
			}
			return 0, false
		})
	}
}

// figureDirection says whether more of a figure is better.
func figureDirection(f result.Figure) string {
	n := f.Name
	switch {
	case strings.Contains(n, "failed"), strings.Contains(n, "missed"), strings.Contains(n, "slow"),
		strings.Contains(n, "leader_changes"), strings.HasSuffix(n, "_ratio"):
		return "lower"
	case strings.Contains(n, "prepare"):
		return ""
	}
	switch f.Unit {
	case "s":
		return "lower"
	case "ops/s", "B/s":
		return "higher"
	}
	return ""
}

// decide computes the deltas and the best run of a row.
func (row *ComparedRow) decide(runs []ComparedRun) {
	base := row.Values[0]
	row.Deltas = make([]float64, len(row.Values))
	for i, v := range row.Values {
		row.Deltas[i] = math.NaN()
		if i > 0 && base != 0 && row.Unit != "status" {
			row.Deltas[i] = (v - base) / math.Abs(base)
		}
	}
	if row.Better == "" {
		return
	}
	best := 0
	for i, v := range row.Values {
		if (row.Better == "lower" && v < row.Values[best]) || (row.Better == "higher" && v > row.Values[best]) {
			best = i
		}
	}
	lo, hi := row.Values[0], row.Values[0]
	for _, v := range row.Values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	switch {
	case row.Unit == "status":
		if lo == hi {
			row.Best, row.Reason = "similar", "same status"
			return
		}
	case len(row.ci) == len(row.Values) && cisOverlap(row.ci, best):
		row.Best, row.Reason = "similar", "the confidence intervals of the p99s overlap"
		return
	case hi == 0 || (hi-lo)/math.Max(math.Abs(hi), math.Abs(lo)) < SimilarWithin:
		row.Best, row.Reason = "similar", fmt.Sprintf("within %.0f %%", 100*SimilarWithin)
		return
	}
	row.Best = runs[best].Label
}

// cisOverlap reports whether the best run's interval overlaps any other's.
func cisOverlap(ci [][2]float64, best int) bool {
	for i, c := range ci {
		if i != best && c[0] <= ci[best][1] && ci[best][0] <= c[1] {
			return true
		}
	}
	return false
}

// compareValue formats a row's value in its unit.
func compareValue(v float64, unit string) string {
	if unit == "status" {
		return verdict.Status(int(v)).String()
	}
	return units.FormatValue(v, unit)
}

func fmtDelta(d float64) string {
	if math.IsNaN(d) {
		return ""
	}
	return fmt.Sprintf("%+.1f %%", 100*d)
}

// CompareText writes the comparison as a table: one column per run, the
// delta of each later run from the first, and which run is better.
func CompareText(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	for _, r := range c.Runs {
		ew.printf("%s: %s  (%s, %s)\n", r.Label, r.Source, r.Status, r.Command)
	}
	if lines := c.differenceLines(); len(lines) > 0 {
		ew.printf("\nWARNING: %s:\n", differenceWarning)
		for _, l := range lines {
			ew.printf("  %s\n", l)
		}
	}
	ew.printf("\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	hdr := []string{"workload", "figure"}
	for _, r := range c.Runs {
		hdr = append(hdr, r.Label)
	}
	for _, r := range c.Runs[1:] {
		hdr = append(hdr, r.Label+" vs "+c.Runs[0].Label)
	}
	hdr = append(hdr, "better")
	fmt.Fprintf(tw, "%s\n", strings.Join(hdr, "\t"))
	for _, row := range c.Rows {
		cells := []string{row.Workload, row.Figure}
		for _, v := range row.Values {
			cells = append(cells, compareValue(v, row.Unit))
		}
		for _, d := range row.Deltas[1:] {
			cells = append(cells, fmtDelta(d))
		}
		better := row.Best
		if row.Reason != "" {
			better += " (" + row.Reason + ")"
		}
		cells = append(cells, better)
		fmt.Fprintf(tw, "%s\n", strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
	ew.printf("\nbetter: lower latencies, higher rates, better verdicts; \"similar\" when within %.0f %% or, for p99s, when the confidence intervals overlap\n", 100*SimilarWithin)
	return ew.err
}

// CompareJSON writes the comparison as JSON: the runs, the parameter
// differences and the rows with their values and deltas.
func CompareJSON(w io.Writer, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// CompareHTML writes the comparison as one self-contained page: the table
// and, for every latency, the runs' CDFs overlaid.
func CompareHTML(w io.Writer, c *Comparison) error {
	p := page{CSS: css(), Title: "etcdbench compare"}
	var names []string
	for _, r := range c.Runs {
		names = append(names, r.Label+": "+r.Source)
	}
	p.Subtitle = strings.Join(names, " · ")
	var b strings.Builder
	esc := template.HTMLEscapeString
	if lines := c.differenceLines(); len(lines) > 0 {
		fmt.Fprintf(&b, `<section id="differences"><p><span class="badge WARN">WARNING</span> %s:</p><ul class="notes">`, esc(differenceWarning))
		for _, l := range lines {
			b.WriteString(`<li>` + esc(l) + `</li>`)
		}
		b.WriteString(`</ul></section>`)
	}
	b.WriteString(`<section id="runs"><h2>Runs</h2><div class="scroll"><table><thead><tr><th>run</th><th>status</th><th>command</th></tr></thead><tbody>`)
	for i, r := range c.Runs {
		started := ""
		if t := c.r[i].StartedAt; !t.IsZero() {
			started = " · " + t.UTC().Format("2006-01-02 15:04 UTC")
		}
		fmt.Fprintf(&b, `<tr><td>%s<br><span class="muted">%s%s</span></td><td><span class="badge %s">%s</span></td><td><code>%s</code></td></tr>`,
			esc(r.Label), esc(r.Source), esc(started), esc(r.Status), esc(r.Status), esc(r.Command))
	}
	b.WriteString(`</tbody></table></div></section><section id="comparison"><h2>Side by side</h2><div class="scroll"><table><thead><tr><th>workload</th><th>figure</th>`)
	for _, r := range c.Runs {
		fmt.Fprintf(&b, `<th class="num">%s</th>`, esc(r.Label))
	}
	for _, r := range c.Runs[1:] {
		fmt.Fprintf(&b, `<th class="num">%s vs %s</th>`, esc(r.Label), esc(c.Runs[0].Label))
	}
	b.WriteString(`<th>better</th></tr></thead><tbody>`)
	for _, row := range c.Rows {
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td>`, esc(row.Workload), esc(row.Figure))
		for i, v := range row.Values {
			cls := "num"
			if row.Best == c.Runs[i].Label {
				cls += " better"
			}
			fmt.Fprintf(&b, `<td class="%s">%s</td>`, cls, esc(compareValue(v, row.Unit)))
		}
		for _, d := range row.Deltas[1:] {
			fmt.Fprintf(&b, `<td class="num">%s</td>`, esc(fmtDelta(d)))
		}
		better := row.Best
		if row.Reason != "" {
			better += ` <span class="muted">(` + esc(row.Reason) + `)</span>`
		} else {
			better = esc(better)
		}
		fmt.Fprintf(&b, `<td>%s</td></tr>`, better)
	}
	fmt.Fprintf(&b, `</tbody></table></div><p class="muted">better: lower latencies, higher rates, better verdicts; “similar” when within %.0f %% or, for p99s, when the confidence intervals overlap. Deltas are relative to run A.</p></section>`, 100*SimilarWithin)
	charts, err := c.cdfCharts()
	if err != nil {
		return err
	}
	if len(charts) > 0 {
		b.WriteString(`<section id="cdfs"><h2>Latency distributions</h2><div class="charts">`)
		for _, ch := range charts {
			b.WriteString(`<figure>` + ch.svg() + `</figure>`)
		}
		b.WriteString(`</div></section>`)
	}
	p.Compare = template.HTML(b.String()) // every string in it is escaped above
	p.Footer = fmt.Sprintf("etcdbench %s", c.r[0].Tool.Version)
	return executePage(w, &p)
}

// cdfCharts overlays the runs' CDFs of each latency of each workload.
func (c *Comparison) cdfCharts() ([]*chart, error) {
	var out []*chart
	for w, wl := range c.r[0].Workloads {
		for li, l := range wl.Latencies {
			var curves []cdfCurve
			for i, r := range c.r {
				x := r.Workloads[w].Latency(l.Name)
				if x == nil || x.Count == 0 || x.Histogram.Data == "" {
					continue
				}
				h, err := stats.Decode(x.Histogram)
				if err != nil {
					return nil, fmt.Errorf("%s, workload %s, latency %s: %w", c.Runs[i].Source, wl.Name, l.Name, err)
				}
				curves = append(curves, cdfCurve{name: c.Runs[i].Label, h: h})
			}
			if len(curves) == 0 {
				continue
			}
			th := thresholdOf(&c.r[0].Workloads[w], &c.r[0].Workloads[w].Latencies[li])
			id := fmt.Sprintf("cmp-%d-%s-cdf", w, slug(l.Name))
			if ch := cdfChart(id, wl.Name+": "+l.Name+" latency CDF", curves, th); ch != nil {
				out = append(out, ch)
			}
		}
	}
	return out, nil
}
