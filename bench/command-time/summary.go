package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"etcdbench/bench/internal/cmp"
)

// summaryRow is one command over all rounds.
type summaryRow struct {
	Command string        `json:"command"`
	Rounds  int           `json:"rounds"`
	Median  time.Duration `json:"wall_median_ns"`
	Min     time.Duration `json:"wall_min_ns"`
	Max     time.Duration `json:"wall_max_ns"`
	Limit   time.Duration `json:"limit_ns"`
	Met     bool          `json:"met"`    // the median is within the limit
	Within  int           `json:"within"` // rounds within the limit
	// RateMedian, RateMin and RateMax are the capacity answers' (the
	// highest passing rate) over rounds.
	RateMedian float64 `json:"rate_median"`
	RateMin    float64 `json:"rate_min"`
	RateMax    float64 `json:"rate_max"`
	Unit       string  `json:"unit"`
	// Outcomes counts the rounds by status and exit code, e.g. "PASS
	// (exit 0) x3".
	Outcomes []string `json:"outcomes"`
}

// summarize gives a row per command, in cmds' order, from every run.
func summarize(cmds []command, runs []timed) []summaryRow {
	var rows []summaryRow
	for _, c := range cmds {
		r := summaryRow{Command: c.Name, Limit: c.Limit}
		var walls []time.Duration
		var rates []float64
		count := map[string]int{}
		var kinds []string
		for _, t := range runs {
			if t.Command != c.Name {
				continue
			}
			walls, rates = append(walls, t.Wall), append(rates, t.Rate)
			if t.Wall <= c.Limit {
				r.Within++
			}
			k := fmt.Sprintf("%s (exit %d)", orNone(t.Status), t.ExitCode)
			if count[k] == 0 {
				kinds = append(kinds, k)
			}
			count[k]++
			r.Unit = t.Unit
		}
		r.Rounds = len(walls)
		if r.Rounds == 0 {
			rows = append(rows, r)
			continue
		}
		r.Median, r.Min, r.Max = cmp.MedianDur(walls), slices.Min(walls), slices.Max(walls)
		r.Met = r.Median <= c.Limit
		r.RateMedian = cmp.Median(rates)
		r.RateMin, r.RateMax = cmp.MinMax(rates)
		for _, k := range kinds {
			r.Outcomes = append(r.Outcomes, fmt.Sprintf("%s x%d", k, count[k]))
		}
		rows = append(rows, r)
	}
	return rows
}

func orNone(status string) string {
	if status == "" {
		return "no status"
	}
	return status
}

// renderRound prints one round's runs in the order they ran.
func renderRound(w io.Writer, n, total int, runs []timed) error {
	fmt.Fprintf(w, "round %d/%d (in this order)\n", n, total)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  command\twall\tCPU\texit\tanswer")
	for _, t := range runs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\n", t.Command, fmtSec(t.Wall), fmtSec(t.CPU), t.ExitCode, t.answer)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// renderSummary prints each command's median wall time, its range, its
// limit and whether the median meets it, and the answers it gave.
func renderSummary(w io.Writer, rounds int, rows []summaryRow) error {
	fmt.Fprintf(w, "MEDIANS over %d rounds (wall: fork to exit; range: min..max; met: the median within the target)\n", rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "command\twall\trange\ttarget\tmet\trounds within\tcapacity answer (median, range)\toutcomes")
	for _, r := range rows {
		ans := fmt.Sprintf("%s %s (%s..%s)", rate(r.RateMedian), r.Unit, rate(r.RateMin), rate(r.RateMax))
		fmt.Fprintf(tw, "%s\t%s\t%s..%s\t<= %s\t%s\t%d of %d\t%s\t%s\n", r.Command, fmtSec(r.Median), fmtSec(r.Min), fmtSec(r.Max),
			fmtSec(r.Limit), cmp.YesNo(r.Met), r.Within, r.Rounds, ans, strings.Join(r.Outcomes, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nTargets: issue 14 (capacity <= 2 min, etcd capacity <= 3 min), issue 32 (check <= 80 s).")
	_, err := fmt.Fprintln(w, "This is a measurement on a possibly noisy machine, not a test: the exit status does not depend on it.")
	return err
}

func rate(x float64) string { return cmp.FmtValue(cmp.UnitRate, x) }

// fmtSec prints a wall time to a tenth of a second: 33.1s, 1m45.2s.
func fmtSec(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(100 * time.Millisecond).String()
}

// agreement is how check's answer (capacity's estimate at check's
// budget) compares with capacity's own in the same round, on the same
// directory: their ratio, check / capacity, over the rounds where both
// answered (one model: within agreeGoal).
type agreement struct {
	Command string    `json:"command"` // check or check --quick
	Rounds  int       `json:"rounds"`
	Ratios  []float64 `json:"ratios"`
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	// Within is how many rounds' ratios lie within 1.25x.
	Within int `json:"within"`
}

// agreeGoal is how far check's answer may lie from capacity's.
const agreeGoal = 1.25

// agree pairs each round's answers of the check command and capacity.
func agree(runs []timed, command string) agreement {
	byRound := map[int]map[string]float64{}
	var order []int
	for _, t := range runs {
		if byRound[t.Round] == nil {
			byRound[t.Round] = map[string]float64{}
			order = append(order, t.Round)
		}
		byRound[t.Round][t.Command] = t.Rate
	}
	a := agreement{Command: command}
	for _, n := range order {
		c, k := byRound[n][command], byRound[n]["capacity"]
		if !(c > 0 && k > 0) {
			continue
		}
		r := c / k
		a.Ratios = append(a.Ratios, r)
		if r <= agreeGoal && r >= 1/agreeGoal {
			a.Within++
		}
	}
	a.Rounds = len(a.Ratios)
	if a.Rounds > 0 {
		a.Median = cmp.Median(a.Ratios)
		a.Min, a.Max = cmp.MinMax(a.Ratios)
	}
	return a
}

// renderAgreement prints check's answer against capacity's.
func renderAgreement(w io.Writer, a agreement) error {
	if a.Rounds == 0 {
		_, err := fmt.Fprintf(w, "\n%s / capacity: no round where both gave a rate\n", a.Command)
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s's answer / capacity's in the same round: median %.2f (%.2f..%.2f), %d of %d rounds within %.2fx (issues 32, 42)\n",
		a.Command, a.Median, a.Min, a.Max, a.Within, a.Rounds, agreeGoal)
	return err
}
