package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"etcdbench/bench/internal/cmp"
)

// spread is the median and range of one figure over the rounds.
type spread struct {
	Median cmp.JSONFloat `json:"median"`
	Min    cmp.JSONFloat `json:"min"`
	Max    cmp.JSONFloat `json:"max"`
	N      int           `json:"n"` // finite values
}

func spreadOf(xs []float64) spread {
	var fin []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			fin = append(fin, x)
		}
	}
	lo, hi := cmp.MinMax(fin)
	return spread{cmp.JSONFloat(cmp.Median(fin)), cmp.JSONFloat(lo), cmp.JSONFloat(hi), len(fin)}
}

// goal is how close etcdbench's figure must be to the truth's: within
// Ratio either way, or within Abs, whichever is larger (issue 44).
type goal struct {
	Ratio float64       `json:"ratio"`
	Abs   time.Duration `json:"abs_ns"`
}

// ratio is side / truth: 1 when both are 0, +Inf when only the truth
// is, NaN when either is missing.
func ratio(side, truth float64) float64 {
	switch {
	case math.IsNaN(side) || math.IsNaN(truth):
		return math.NaN()
	case truth == 0 && side == 0:
		return 1
	case truth == 0:
		return math.Inf(1)
	}
	return side / truth
}

// met says a median ratio and a median difference (seconds) meet g.
func (g goal) met(r, diff float64) bool {
	if math.IsNaN(r) && math.IsNaN(diff) {
		return false
	}
	return (r >= 1/g.Ratio && r <= g.Ratio) || math.Abs(diff) <= g.Abs.Seconds()
}

// compared is one figure of etcdbench's against the truth's over the
// rounds that have both.
type compared struct {
	Side  spread `json:"side"`
	Ratio spread `json:"ratio"` // side / truth, per round
	Diff  spread `json:"diff_s"`
	// Met says the median ratio lies within the goal's ratio, or the
	// median difference within its seconds.
	Met bool `json:"within_goal"`
}

func compare(side, truth []float64, g goal) compared {
	var rs, ds []float64
	for i := range side {
		rs = append(rs, ratio(side[i], truth[i]))
		ds = append(ds, side[i]-truth[i])
	}
	c := compared{Side: spreadOf(side), Diff: spreadOf(ds)}
	// +Inf ratios (the truth 0, the side not) count in the median.
	lo, hi := cmp.MinMax(rs)
	c.Ratio = spread{cmp.JSONFloat(cmp.Median(rs)), cmp.JSONFloat(lo), cmp.JSONFloat(hi), c.Diff.N}
	c.Met = c.Diff.N > 0 && g.met(float64(c.Ratio.Median), float64(c.Diff.Median))
	return c
}

// row is one fault under one timeout profile over the rounds.
type row struct {
	Profile string `json:"profile"`
	Fault   string `json:"fault"`
	// Rounds counts the rounds with a truth, Paired those with both.
	Rounds int `json:"rounds"`
	Paired int `json:"paired"`
	// The truth's figures, seconds (Failed: the probe's failed puts).
	Outage    spread `json:"truth_outage_s"`
	NewLeader spread `json:"truth_new_leader_s"`
	Restart   spread `json:"truth_restart_s"`
	Failed    spread `json:"truth_failed_puts"`
	Terms     spread `json:"truth_terms"`
	// LateUntil is from the fault to its last late put's completion,
	// AfterEnd the longest outage after the fault ended (seconds).
	LateUntil spread `json:"truth_late_until_s"`
	AfterEnd  spread `json:"truth_after_end_outage_s"`
	// etcdbench's, against the truth's of the same rounds (nil: no
	// paired round).
	SideOutage    *compared `json:"etcdbench_outage,omitempty"`
	SideNewLeader *compared `json:"etcdbench_new_leader,omitempty"`
	SideRestart   *compared `json:"etcdbench_restart,omitempty"`
	// Met says both the outage and the new leader are within the goal
	// over at least cmp.MinRounds paired rounds.
	Met   bool     `json:"goal_met"`
	Notes []string `json:"notes,omitempty"`
}

// summarize is a row per profile and fault, in their orders.
func summarize(ms []measurement, profiles []profile, faults []string, g goal) []row {
	var out []row
	for _, p := range profiles {
		for _, f := range faults {
			r := row{Profile: p.Name, Fault: f}
			var outage, leader, restart, failed, terms, lateUntil, afterEnd []float64
			var sOut, sLead, sRest, tOut, tLead, tRest []float64
			for _, m := range ms {
				if m.Profile != p.Name || m.Fault != f {
					continue
				}
				for _, n := range m.Notes {
					r.Notes = append(r.Notes, fmt.Sprintf("round %d: %s", m.Round, n))
				}
				t := m.Truth
				if t == nil {
					continue
				}
				r.Rounds++
				outage, leader = append(outage, t.OutageSeconds), append(leader, float64(t.NewLeaderSeconds))
				restart, failed = append(restart, float64(t.RestartSeconds)), append(failed, float64(t.Outage.Failed))
				terms = append(terms, float64(t.Terms))
				lateUntil, afterEnd = append(lateUntil, t.LateUntil), append(afterEnd, t.AfterEndOutage)
				if s := m.Etcdbench; s != nil {
					r.Paired++
					sOut, sLead, sRest = append(sOut, float64(s.OutageSeconds)), append(sLead, float64(s.NewLeaderSeconds)), append(sRest, float64(s.RestartSeconds))
					tOut, tLead, tRest = append(tOut, t.OutageSeconds), append(tLead, float64(t.NewLeaderSeconds)), append(tRest, float64(t.RestartSeconds))
				}
			}
			r.Outage, r.NewLeader, r.Restart, r.Failed, r.Terms = spreadOf(outage), spreadOf(leader), spreadOf(restart), spreadOf(failed), spreadOf(terms)
			r.LateUntil, r.AfterEnd = spreadOf(lateUntil), spreadOf(afterEnd)
			if r.Paired > 0 {
				o, l := compare(sOut, tOut, g), compare(sLead, tLead, g)
				r.SideOutage, r.SideNewLeader = &o, &l
				if f == faultKill {
					rs := compare(sRest, tRest, g)
					r.SideRestart = &rs
				}
				r.Met = o.Met && l.Met && r.Paired >= cmp.MinRounds
			}
			out = append(out, r)
		}
	}
	return out
}

// fmtSpread is "median (min-max)", the median alone when they agree, "-"
// for none.
func fmtSpread(s spread, f func(float64) string) string {
	m, lo, hi := float64(s.Median), float64(s.Min), float64(s.Max)
	switch {
	case math.IsNaN(m):
		return "-"
	case lo == hi || s.N < 2:
		return f(m)
	}
	return fmt.Sprintf("%s (%s-%s)", f(m), f(lo), f(hi))
}

func fmtSecs(x float64) string { return fmt.Sprintf("%.2f", x) }

func fmtCount(x float64) string { return fmt.Sprintf("%.0f", x) }

func fmtRatio(x float64) string {
	if math.IsInf(x, 1) {
		return "+Inf"
	}
	return fmt.Sprintf("%.2f", x)
}

// fmtCompared is etcdbench's figure and its ratio to the truth's.
func fmtCompared(c *compared) (string, string) {
	if c == nil {
		return "-", "-"
	}
	return fmtSpread(c.Side, fmtSecs), fmtSpread(c.Ratio, fmtRatio)
}

// withinWord says whether a row meets the goal, "n/a" without a paired
// round.
func withinWord(r row) string {
	switch {
	case r.SideOutage == nil:
		return "n/a"
	case r.Met:
		return "yes"
	case r.SideOutage.Met && r.SideNewLeader.Met:
		return fmt.Sprintf("medians yes, %d rounds (< %d)", r.Paired, cmp.MinRounds)
	}
	var no []string
	if !r.SideOutage.Met {
		no = append(no, "outage")
	}
	if !r.SideNewLeader.Met {
		no = append(no, "new leader")
	}
	return "no (" + strings.Join(no, ", ") + ")"
}

// printTable prints the summary: a row per profile and fault, the goal,
// and the notes.
func printTable(w io.Writer, rows []row, g goal) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "profile\tfault\trounds\ttruth outage s\ttruth new leader s\ttruth restart s\ttruth failed puts\ttruth last late s\ttruth after end s\tetcdbench outage s\tratio\tetcdbench new leader s\tratio\tetcdbench restart s\twithin goal")
	for _, r := range rows {
		so, sor := fmtCompared(r.SideOutage)
		sl, slr := fmtCompared(r.SideNewLeader)
		sr, _ := fmtCompared(r.SideRestart)
		rounds := fmt.Sprint(r.Rounds)
		if r.Paired != r.Rounds {
			rounds = fmt.Sprintf("%d (%d paired)", r.Rounds, r.Paired)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Profile, r.Fault, rounds,
			fmtSpread(r.Outage, fmtSecs), fmtSpread(r.NewLeader, fmtSecs), fmtSpread(r.Restart, fmtSecs), fmtSpread(r.Failed, fmtCount),
			fmtSpread(r.LateUntil, fmtSecs), fmtSpread(r.AfterEnd, fmtSecs), so, sor, sl, slr, sr, withinWord(r))
	}
	tw.Flush()
	met, paired := 0, 0
	for _, r := range rows {
		if r.SideOutage != nil {
			paired++
		}
		if r.Met {
			met++
		}
	}
	if paired > 0 {
		fmt.Fprintf(w, "goal met for %d of %d faults and profiles (issue 44: the outage and the time to a new leader within %.1fx or %.1f s of the truth's, whichever is larger, median of >= %d paired rounds)\n",
			met, len(rows), g.Ratio, g.Abs.Seconds(), cmp.MinRounds)
	} else {
		fmt.Fprintln(w, "etcdbench: no paired round (its side did not run, or failed: see the notes)")
	}
	var notes []string
	for _, r := range rows {
		for _, n := range r.Notes {
			notes = append(notes, fmt.Sprintf("  %s %s %s", r.Profile, r.Fault, n))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "failed measurements:\n%s\n", strings.Join(notes, "\n"))
	}
}

// figures are the summary's figures by name for the --results file,
// <profile>_<fault>_ then truth_outage_s (_min, _max),
// truth_new_leader_s (_min, _max), truth_restart_s, truth_failed_puts,
// rounds, and etcdbench's outage_s, outage_ratio (_min, _max),
// new_leader_s, new_leader_ratio (_min, _max), restart_s, within_goal;
// and goals_met. A figure with no finite value is left out.
func figures(rows []row) map[string]float64 {
	out := map[string]float64{}
	put := func(k string, v cmp.JSONFloat) {
		if x := float64(v); !math.IsNaN(x) && !math.IsInf(x, 0) {
			out[k] = x
		}
	}
	spr := func(k string, s spread) {
		put(k, s.Median)
		put(k+"_min", s.Min)
		put(k+"_max", s.Max)
	}
	met := 0
	for _, r := range rows {
		k := cmp.Slug(r.Profile + " " + r.Fault)
		put(k+"_rounds", cmp.JSONFloat(r.Rounds))
		spr(k+"_truth_outage_s", r.Outage)
		spr(k+"_truth_new_leader_s", r.NewLeader)
		spr(k+"_truth_restart_s", r.Restart)
		put(k+"_truth_failed_puts", r.Failed.Median)
		put(k+"_truth_terms", r.Terms.Median)
		spr(k+"_truth_late_until_s", r.LateUntil)
		spr(k+"_truth_after_end_outage_s", r.AfterEnd)
		if r.SideOutage != nil {
			put(k+"_paired", cmp.JSONFloat(r.Paired))
			put(k+"_etcdbench_outage_s", r.SideOutage.Side.Median)
			spr(k+"_outage_ratio", r.SideOutage.Ratio)
			put(k+"_etcdbench_new_leader_s", r.SideNewLeader.Side.Median)
			spr(k+"_new_leader_ratio", r.SideNewLeader.Ratio)
			if r.SideRestart != nil {
				put(k+"_etcdbench_restart_s", r.SideRestart.Side.Median)
				put(k+"_restart_ratio", r.SideRestart.Ratio.Median)
			}
			w := 0.0
			if r.Met {
				w, met = 1, met+1
			}
			out[k+"_within_goal"] = w
		}
	}
	out["goals_met"] = float64(met)
	out["rows"] = float64(len(rows))
	return out
}
