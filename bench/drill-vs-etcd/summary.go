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
// Ratio either way, or within Abs, whichever is larger: the drill's goal.
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
	// Defrag is the leader's defragmentation (seconds), DBSize its db
	// before it (bytes) (defrag-leader); P99During the probe's put p99
	// from the fault to the end of the outage or of the fault.
	Defrag    spread `json:"truth_defrag_s"`
	DBSize    spread `json:"truth_db_size_bytes"`
	P99During spread `json:"truth_p99_during_s"`
	// etcdbench's, against the truth's of the same rounds (nil: no
	// paired round); the outage and the new leader are judged, the rest
	// recorded (their within_goal says only where their medians lie).
	SideOutage    *compared `json:"etcdbench_outage,omitempty"`
	SideNewLeader *compared `json:"etcdbench_new_leader,omitempty"`
	SideRestart   *compared `json:"etcdbench_restart,omitempty"`
	SideAfterEnd  *compared `json:"etcdbench_after_end_outage,omitempty"`
	SideDefrag    *compared `json:"etcdbench_defrag,omitempty"`
	SideP99During *compared `json:"etcdbench_p99_during,omitempty"`
	// etcdbench's own, over the paired rounds.
	SideLateUntil spread `json:"etcdbench_late_until_s"`
	SideDBSize    spread `json:"etcdbench_db_size_bytes"`
	SideElections spread `json:"etcdbench_elections"`
	// Met says both the outage and the new leader are within the goal
	// over at least cmp.MinRounds paired rounds.
	Met   bool     `json:"goal_met"`
	Notes []string `json:"notes,omitempty"`
}

// pairs collects one figure of both sides over the paired rounds.
type pairs struct{ side, truth []float64 }

func (p *pairs) add(side cmp.JSONFloat, truth float64) {
	p.side, p.truth = append(p.side, float64(side)), append(p.truth, truth)
}

func (p pairs) compare(g goal) *compared {
	c := compare(p.side, p.truth, g)
	return &c
}

// summarize is a row per profile and fault, in their orders.
func summarize(ms []measurement, profiles []profile, faults []string, g goal) []row {
	var out []row
	for _, p := range profiles {
		for _, f := range faults {
			r := row{Profile: p.Name, Fault: f}
			var outage, leader, restart, failed, terms, lateUntil, afterEnd, defrag, dbSize, p99During []float64
			var pOut, pLead, pRest, pAfter, pDefrag, pP99 pairs
			var sLate, sDB, sElections []float64
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
				defrag, p99During = append(defrag, float64(t.DefragSeconds)), append(p99During, float64(t.P99During))
				if t.DBSizeBytes > 0 {
					dbSize = append(dbSize, float64(t.DBSizeBytes))
				}
				if s := m.Etcdbench; s != nil {
					r.Paired++
					pOut.add(s.OutageSeconds, t.OutageSeconds)
					pLead.add(s.NewLeaderSeconds, float64(t.NewLeaderSeconds))
					pRest.add(s.RestartSeconds, float64(t.RestartSeconds))
					pAfter.add(s.AfterEndOutage, t.AfterEndOutage)
					pDefrag.add(s.DefragSeconds, float64(t.DefragSeconds))
					pP99.add(s.P99During, float64(t.P99During))
					sLate, sDB, sElections = append(sLate, float64(s.LateUntil)), append(sDB, float64(s.DBSizeBytes)), append(sElections, float64(s.Elections))
				}
			}
			r.Outage, r.NewLeader, r.Restart, r.Failed, r.Terms = spreadOf(outage), spreadOf(leader), spreadOf(restart), spreadOf(failed), spreadOf(terms)
			r.LateUntil, r.AfterEnd = spreadOf(lateUntil), spreadOf(afterEnd)
			r.Defrag, r.DBSize, r.P99During = spreadOf(defrag), spreadOf(dbSize), spreadOf(p99During)
			r.SideLateUntil, r.SideDBSize, r.SideElections = spreadOf(sLate), spreadOf(sDB), spreadOf(sElections)
			if r.Paired > 0 {
				r.SideOutage, r.SideNewLeader = pOut.compare(g), pLead.compare(g)
				r.SideAfterEnd, r.SideP99During = pAfter.compare(g), pP99.compare(g)
				switch f {
				case faultKill:
					r.SideRestart = pRest.compare(g)
				case faultDefrag:
					r.SideDefrag = pDefrag.compare(g)
				}
				r.Met = r.SideOutage.Met && r.SideNewLeader.Met && r.Paired >= cmp.MinRounds
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
	case math.IsNaN(m) || s.N == 0:
		return "-"
	case lo == hi || s.N < 2:
		return f(m)
	}
	return fmt.Sprintf("%s (%s-%s)", f(m), f(lo), f(hi))
}

func fmtSecs(x float64) string { return fmt.Sprintf("%.2f", x) }

func fmtCount(x float64) string { return fmt.Sprintf("%.0f", x) }

func fmtMiB(x float64) string { return fmt.Sprintf("%.0f", x/(1<<20)) }

func fmtRatio(x float64) string {
	if math.IsInf(x, 1) {
		return "+Inf"
	}
	return fmt.Sprintf("%.2f", x)
}

// fmtCompared is etcdbench's figure and its ratio to the truth's.
func fmtCompared(c *compared) (string, string) {
	if c == nil || c.Side.N == 0 {
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

// printTable prints the summary: a row per profile and fault of the
// judged figures (the outage and the new leader) with the outage after
// the fault's end beside the outage, the goal, a row per profile and
// fault of the figures recorded, and the notes.
func printTable(w io.Writer, rows []row, g goal) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "profile\tfault\trounds\ttruth outage s\tetcdbench outage s\tratio\ttruth after end s\tetcdbench after end s\tratio\ttruth new leader s\tetcdbench new leader s\tratio\twithin goal")
	for _, r := range rows {
		so, sor := fmtCompared(r.SideOutage)
		sa, sar := fmtCompared(r.SideAfterEnd)
		sl, slr := fmtCompared(r.SideNewLeader)
		rounds := fmt.Sprint(r.Rounds)
		if r.Paired != r.Rounds {
			rounds = fmt.Sprintf("%d (%d paired)", r.Rounds, r.Paired)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Profile, r.Fault, rounds,
			fmtSpread(r.Outage, fmtSecs), so, sor, fmtSpread(r.AfterEnd, fmtSecs), sa, sar, fmtSpread(r.NewLeader, fmtSecs), sl, slr, withinWord(r))
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
		fmt.Fprintf(w, "goal met for %d of %d faults and profiles (issue 44: the outage and the time to a new leader within %.1fx or %.1f s of the truth's, whichever is larger, median of >= %d paired rounds; the outage after the fault's end is recorded, not judged)\n",
			met, len(rows), g.Ratio, g.Abs.Seconds(), cmp.MinRounds)
	} else {
		fmt.Fprintln(w, "etcdbench: no paired round (its side did not run, or failed: see the notes)")
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "profile\tfault\ttruth restart s\tetcdbench restart s\tratio\ttruth defrag s\tetcdbench defrag s\tratio\ttruth db MiB\tetcdbench db MiB\ttruth p99 during s\tetcdbench p99 during s\ttruth last late s\tetcdbench last late s\ttruth failed puts\ttruth terms\tetcdbench elections")
	for _, r := range rows {
		sr, srr := fmtCompared(r.SideRestart)
		sd, sdr := fmtCompared(r.SideDefrag)
		sp, _ := fmtCompared(r.SideP99During)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Profile, r.Fault,
			fmtSpread(r.Restart, fmtSecs), sr, srr, fmtSpread(r.Defrag, fmtSecs), sd, sdr, fmtSpread(r.DBSize, fmtMiB), fmtSpread(r.SideDBSize, fmtMiB),
			fmtSpread(r.P99During, fmtSecs), sp, fmtSpread(r.LateUntil, fmtSecs), fmtSpread(r.SideLateUntil, fmtSecs),
			fmtSpread(r.Failed, fmtCount), fmtSpread(r.Terms, fmtCount), fmtSpread(r.SideElections, fmtCount))
	}
	tw.Flush()
	fmt.Fprintln(w, "(recorded, not judged; the truth's p99 and failed puts are its probe's, etcdbench's p99 its load's)")
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
// truth_defrag_s, truth_db_size_bytes, truth_p99_during_s, rounds, and
// etcdbench's outage_s, outage_ratio (_min, _max), new_leader_s,
// new_leader_ratio (_min, _max), after_end_outage_s (_min, _max),
// after_end_outage_ratio, restart_s, defrag_s, defrag_ratio, within_goal;
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
		spr(k+"_truth_defrag_s", r.Defrag)
		put(k+"_truth_db_size_bytes", r.DBSize.Median)
		spr(k+"_truth_p99_during_s", r.P99During)
		if r.SideOutage != nil {
			put(k+"_paired", cmp.JSONFloat(r.Paired))
			put(k+"_etcdbench_outage_s", r.SideOutage.Side.Median)
			spr(k+"_outage_ratio", r.SideOutage.Ratio)
			put(k+"_etcdbench_new_leader_s", r.SideNewLeader.Side.Median)
			spr(k+"_new_leader_ratio", r.SideNewLeader.Ratio)
			spr(k+"_etcdbench_after_end_outage_s", r.SideAfterEnd.Side)
			put(k+"_after_end_outage_ratio", r.SideAfterEnd.Ratio.Median)
			spr(k+"_etcdbench_p99_during_s", r.SideP99During.Side)
			spr(k+"_etcdbench_late_until_s", r.SideLateUntil)
			if r.SideRestart != nil {
				put(k+"_etcdbench_restart_s", r.SideRestart.Side.Median)
				put(k+"_restart_ratio", r.SideRestart.Ratio.Median)
			}
			if r.SideDefrag != nil {
				spr(k+"_etcdbench_defrag_s", r.SideDefrag.Side)
				spr(k+"_defrag_ratio", r.SideDefrag.Ratio)
				put(k+"_etcdbench_db_size_bytes", r.SideDBSize.Median)
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
