package tune

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"etcdbench/internal/units"
)

// WriteText writes the comparison table: the combinations, then per
// combination each figure's median and range over the rounds, the worst
// verdict, the differences larger than the noise and the notes.
// A figure no run gave (the time to a new leader, with one member) has
// no column.
func WriteText(w io.Writer, s Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "etcdbench tune: %s\n", s.Load)
	fmt.Fprintf(&b, "%d combinations x %d round(s), alternating: %s\n\n", len(s.Combinations), s.Rounds, orderText(s))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range s.Combinations {
		fmt.Fprintf(tw, "%s\t%s\n", c.ID(), c.Label())
	}
	tw.Flush()
	b.WriteString("\nmedian [min..max] over the rounds; disk figures from etcd's own histograms, the slowest member\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := []string{"", "runs"}
	cols := shownMetrics(s)
	for _, m := range cols {
		head = append(head, Metrics[m].Title+unitSuffix(Metrics[m].Unit))
	}
	fmt.Fprintln(tw, strings.Join(append(head, "verdicts"), "\t"))
	for c, combo := range s.Combinations {
		row := []string{combo.ID(), fmt.Sprint(runsOf(s, c))}
		for _, m := range cols {
			row = append(row, cell(s.Cells[c][m], Metrics[m].Unit))
		}
		v := "-"
		if s.Worst[c] != nil {
			v = s.Worst[c].String()
		}
		fmt.Fprintln(tw, strings.Join(append(row, v), "\t"))
	}
	tw.Flush()
	b.WriteString("\n")
	if math.IsNaN(s.Chance) {
		b.WriteString("Differences larger than the noise:\n")
	} else {
		k := len(s.Combinations)
		n := len(Metrics) * k * (k - 1) / 2
		fmt.Fprintf(&b, "Differences larger than the noise (ranges over the rounds that do not overlap; by noise alone that happens with probability %.3f for one figure of one pair, so about %.1f of these %d comparisons would show with no real difference):\n",
			s.Chance, s.Chance*float64(n), n)
	}
	for _, l := range s.DiffLines() {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if s.Chance > weakChance {
		fmt.Fprintf(&b, "  (with this few rounds that is weak evidence: --rounds %d brings the chance under %.2f)\n", roundsFor(weakChance), weakChance)
	}
	if len(s.Notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// weakChance is the chance of a false difference above which the table
// says the evidence is weak.
const weakChance = 0.05

// roundsFor is the fewest rounds whose ChanceOfSeparation is under p.
func roundsFor(p float64) int {
	n := MinRounds
	for ChanceOfSeparation(n, n) >= p {
		n++
	}
	return n
}

func unitSuffix(unit string) string {
	if unit == "ops/s" {
		return " (ops/s)"
	}
	return ""
}

func runsOf(s Summary, c int) int {
	n := 0
	for _, r := range s.Runs {
		if r.Combination == c {
			n++
		}
	}
	return n
}

// orderText lists the runs of each round: "r1 c1 c2, r2 c2 c1".
func orderText(s Summary) string {
	var rounds []string
	cur := 0
	for _, sl := range Schedule(len(s.Combinations), s.Rounds) {
		if sl.Round != cur {
			rounds = append(rounds, fmt.Sprintf("r%d", sl.Round))
			cur = sl.Round
		}
		rounds[len(rounds)-1] += " " + s.Combinations[sl.Combination].ID()
	}
	return strings.Join(rounds, ", ")
}

// cell is "median [min..max]", or "median" for one round, or "-".
func cell(sp Spread, unit string) string {
	switch sp.N() {
	case 0:
		return "-"
	case 1:
		return format(sp.Median, unit)
	}
	return fmt.Sprintf("%s [%s..%s]", format(sp.Median, unit), format(sp.Min, unit), format(sp.Max, unit))
}

// format writes a figure in its unit as the reports do (units.FormatValue),
// "-" for a cell without rounds, and throughput as a bare number: its
// column's title says "(ops/s)".
func format(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case unit == "ops/s":
		return fmt.Sprintf("%.0f", v)
	}
	return units.FormatValue(v, unit)
}

// WriteTrailer says after the table where the runs were saved (saveDir,
// "" when nowhere) and whether the tune was cut short (done of total runs
// finished) or a run failed.
func WriteTrailer(w io.Writer, saveDir string, interrupted, failed bool, done, total int) error {
	var b strings.Builder
	if saveDir != "" {
		fmt.Fprintf(&b, "\nEvery run's result is saved in %s (tune-*-<combination>-r<round>-*.json).\n", saveDir)
	}
	if interrupted {
		fmt.Fprintf(&b, "\nInterrupted: %d of %d runs finished, and the table covers only those.\n", done, total)
	} else if failed {
		b.WriteString("\nAt least one run FAILED one of etcd's disk limits (verdicts column; the JSON output or the saved runs have the verdicts).\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shownMetrics are the indexes of the Metrics that some run gave.
func shownMetrics(s Summary) []int {
	var cols []int
	for m := range Metrics {
		for c := range s.Combinations {
			if len(s.Cells[c][m].Values) > 0 {
				cols = append(cols, m)
				break
			}
		}
	}
	return cols
}
