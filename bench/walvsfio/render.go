package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// fmtDur prints d with three significant digits (255µs, 40.9µs, 3.05s).
func fmtDur(d time.Duration) string {
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

// fmtRatio prints a ratio with two decimals, "n/a" when there is none.
func fmtRatio(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x)
}

// fmtBand prints a target band.
func fmtBand(t target) string {
	if t.Lo <= 0 {
		return "<= " + fmtRatio(t.Hi)
	}
	return fmtRatio(t.Lo) + ".." + fmtRatio(t.Hi)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// renderRound prints one round's runs and ratios.
func renderRound(w io.Writer, r round, total int) error {
	first := toolFio
	if !r.FioFirst {
		first = toolEtcd
	}
	fmt.Fprintf(w, "round %d/%d (%s ran first)\n", r.N, total, first)
	const row = "%-18s %7s %8s %8s %8s %8s %8s %8s\n"
	fmt.Fprintf(w, row, "run", "syncs", "p50", "p99", "wall", "runtime", "CPU", "CPU/sync")
	ms := []measurement{r.Fio, r.Etcd}
	if r.Adaptive != nil {
		ms = append(ms, *r.Adaptive)
	}
	for i, m := range ms {
		fmt.Fprintf(w, row, m.Tool, strconv.FormatInt(m.Syncs, 10), fmtDur(m.P50), fmtDur(m.P99),
			fmtDur(m.Wall), fmtDur(m.Runtime), fmtDur(m.CPU), fmtDur(m.CPUPerSync()))
		if i == 1 {
			x := roundRatios(r)
			fmt.Fprintf(w, row, "  etcdbench/fio", fmtRatio(float64(r.Etcd.Syncs)/float64(r.Fio.Syncs)), fmtRatio(x.P50), fmtRatio(x.P99),
				fmtRatio(ratio(r.Etcd.Wall, r.Fio.Wall)), fmtRatio(ratio(r.Etcd.Runtime, r.Fio.Runtime)),
				fmtRatio(ratio(r.Etcd.CPU, r.Fio.CPU)), fmtRatio(x.CPUPerSync))
		}
	}
	if r.Adaptive != nil && r.Adaptive.Stop != "" {
		fmt.Fprintf(w, "  adaptive stop: %s\n", r.Adaptive.Stop)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// renderSummary prints the medians, the targets and whether they are met.
func renderSummary(w io.Writer, s summary) error {
	fmt.Fprintf(w, "MEDIANS over %d rounds (ratio: median of the per-round ratios etcdbench/fio; range: min..max of them)\n", s.Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tfio\tetcdbench\tratio\trange\ttarget\tmet")
	for _, r := range s.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s..%s\t%s\t%s\n", r.Metric, fmtDur(r.Fio), fmtDur(r.Etcd),
			fmtRatio(float64(r.Ratio)), fmtRatio(float64(r.RatioMin)), fmtRatio(float64(r.RatioMax)),
			fmtBand(r.Target), yesNo(r.Met))
	}
	fmt.Fprintf(tw, "syncs\t%d\t%d\n", s.Syncs[0], s.Syncs[1])
	fmt.Fprintf(tw, "wall time\t%s\t%s\n", fmtDur(s.Wall[0]), fmtDur(s.Wall[1]))
	fmt.Fprintf(tw, "CPU time\t%s\t%s\n", fmtDur(s.CPU[0]), fmtDur(s.CPU[1]))
	if err := tw.Flush(); err != nil {
		return err
	}
	if a := s.Adaptive; a != nil {
		fmt.Fprintf(w, "\nADAPTIVE mode (median): %d syncs in %s (wall %s), vs fio's fixed %d syncs in %s wall\n",
			a.Syncs, fmtDur(a.Runtime), fmtDur(a.Wall), a.FioSyncs, fmtDur(a.FioWall))
		fmt.Fprintf(w, "  stopped because: %s\n", strings.Join(a.Stops, "; "))
	}
	met := 0
	for _, r := range s.Rows {
		if r.Met {
			met++
		}
	}
	fmt.Fprintf(w, "\n%d of %d targets met. Targets: %s.\n", met, len(s.Rows), targets()[0].Source)
	_, err := fmt.Fprintln(w, "This is a measurement on a possibly noisy machine, not a test: the exit status does not depend on it.")
	return err
}
