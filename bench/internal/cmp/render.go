package cmp

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"
)

// Units of Row values, which decide how they are printed.
const (
	UnitDuration  = "ns"
	UnitRate      = "ops/s"
	UnitBandwidth = "B/s"
	UnitCount     = "count"
)

// FmtDur prints d with three significant digits (255µs, 40.9µs, 3.05s),
// "-" for zero or less.
func FmtDur(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	digits := len(strconv.FormatInt(int64(d), 10))
	if digits > 3 {
		step := time.Duration(math.Pow10(digits - 3))
		d = d.Round(step)
	}
	return d.String()
}

// FmtRatio prints a ratio with two decimals, "n/a" when there is none.
func FmtRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x)
}

// FmtBand prints a target band: "<= 1.00", ">= 0.95" or "0.90..1.10".
func FmtBand(t Target) string {
	switch {
	case t.Lo <= 0 && t.Hi <= 0:
		return "any"
	case t.Lo <= 0:
		return "<= " + FmtRatio(t.Hi)
	case t.Hi <= 0:
		return ">= " + FmtRatio(t.Lo)
	}
	return FmtRatio(t.Lo) + ".." + FmtRatio(t.Hi)
}

// YesNo prints a met target as "yes", a missed one as "NO".
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// FmtValue prints v in unit: durations as FmtDur, rates as 61.8k,
// bandwidths in MiB/s, counts whole.
func FmtValue(unit string, v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	switch unit {
	case UnitDuration:
		return FmtDur(time.Duration(math.Round(v)))
	case UnitRate:
		if v >= 1e4 {
			return fmt.Sprintf("%.1fk", v/1e3)
		}
		return fmt.Sprintf("%.0f", v)
	case UnitBandwidth:
		return fmt.Sprintf("%.1f MiB/s", v/(1<<20))
	case UnitCount:
		return strconv.FormatInt(int64(math.Round(v)), 10)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Extra is a summary line with absolute figures and no ratio.
type Extra struct {
	Name, Fio, Etcd string
}

// RenderSummary prints the medians over rounds, the targets and whether
// they are met, then the extra lines. A pair column is printed when rows
// name pairs.
func RenderSummary(w io.Writer, rounds int, rows []Row, extra []Extra) error {
	return RenderSummaryLabeled(w, rounds, rows, extra, DefaultLabels)
}

// RenderSummaryLabeled is RenderSummary with other names for the two
// sides.
func RenderSummaryLabeled(w io.Writer, rounds int, rows []Row, extra []Extra, l Labels) error {
	l = l.orDefault()
	fmt.Fprintf(w, "MEDIANS over %d rounds (ratio: median of the per-round ratios %s/%s; range: min..max of them)\n", rounds, l.Subject, l.Base)
	pairs := false
	for _, r := range rows {
		pairs = pairs || r.Pair != ""
	}
	lead := func(pair string) string {
		if pairs {
			return pair + "\t"
		}
		return ""
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, lead("pair")+"metric\t"+l.Base+"\t"+l.Subject+"\tratio\trange\ttarget\tmet")
	for _, r := range rows {
		band, met := "info", "-"
		if r.Target != nil {
			band, met = FmtBand(*r.Target), YesNo(r.Met)
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s..%s\t%s\t%s\n", lead(r.Pair), r.Metric, FmtValue(r.Unit, r.Fio), FmtValue(r.Unit, r.Etcd),
			FmtRatio(float64(r.Ratio)), FmtRatio(float64(r.RatioMin)), FmtRatio(float64(r.RatioMax)), band, met)
	}
	for _, e := range extra {
		fmt.Fprintf(tw, "%s%s\t%s\t%s\n", lead(""), e.Name, e.Fio, e.Etcd)
	}
	return tw.Flush()
}

// RenderFooter prints how many targets were met, where they come from and
// that the exit status does not depend on them.
func RenderFooter(w io.Writer, rows []Row, source string) error {
	met, judged := 0, 0
	for _, r := range rows {
		if r.Target == nil {
			continue
		}
		judged++
		if r.Met {
			met++
		}
	}
	fmt.Fprintf(w, "\n%d of %d targets met. Targets: %s.\n", met, judged, source)
	_, err := fmt.Fprintln(w, "This is a measurement on a possibly noisy machine, not a test: the exit status does not depend on it.")
	return err
}
