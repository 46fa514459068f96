package main

import (
	"fmt"
	"math"
	"strings"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/units"
)

// mib formats bytes as MiB with one decimal.
func mib(b float64) string {
	if math.IsNaN(b) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", b/(1<<20))
}

// group is one etcd and db size: its observations in round order.
type group struct {
	etcd, target string
	obs          []observation
}

func groups(obs []observation) []group {
	var gs []group
	idx := map[[2]string]int{}
	for _, o := range obs {
		k := [2]string{o.Etcd, o.Target}
		i, ok := idx[k]
		if !ok {
			i = len(gs)
			idx[k] = i
			gs = append(gs, group{etcd: o.Etcd, target: o.Target})
		}
		gs[i].obs = append(gs[i].obs, o)
	}
	return gs
}

// caseRow is one case of one etcd and size over rounds.
type caseRow struct {
	Case                      listCase
	Truth, TruthLo, TruthHi   float64 // peak VmRSS, median and range
	Predicted                 float64 // median of the rounds' predictions
	Ratio, RatioLo, RatioHi   float64 // predicted / truth per round
	Over, OverPredicted       float64 // over idle: the truth's (its own start's idle), the prediction's
	OverRatio, OverLo, OverHi float64 // predicted over idle / truth over idle per round
	Rounds                    int
	Met                       bool
}

// rowOf summarizes case c of g's rounds; rounds that skipped it count
// not.
func rowOf(g group, c listCase) (caseRow, bool) {
	var truth, pred, ratios, over, overPred, overRatios []float64
	for _, o := range g.obs {
		for _, r := range o.Cases {
			if r.listCase != c || r.Skipped != "" || r.Peak.RSS == 0 || len(r.Errs) > 0 {
				continue
			}
			p := o.Predicted.peak(c)
			truth, pred = append(truth, float64(r.Peak.RSS)), append(pred, p)
			ratios = append(ratios, cmp.Ratio(p, float64(r.Peak.RSS)))
			ov := float64(r.Peak.RSS - r.Idle.RSS)
			over, overPred = append(over, ov), append(overPred, o.Predicted.over(c))
			overRatios = append(overRatios, cmp.Ratio(o.Predicted.over(c), ov))
		}
	}
	if len(truth) == 0 {
		return caseRow{}, false
	}
	row := caseRow{Case: c, Truth: cmp.Median(truth), Predicted: cmp.Median(pred), Ratio: cmp.Median(ratios),
		Over: cmp.Median(over), OverPredicted: cmp.Median(overPred), OverRatio: cmp.Median(overRatios), Rounds: len(truth)}
	row.TruthLo, row.TruthHi = cmp.MinMax(truth)
	row.RatioLo, row.RatioHi = cmp.MinMax(ratios)
	row.OverLo, row.OverHi = cmp.MinMax(overRatios)
	row.Met = within(row.Ratio)
	return row, true
}

// within says whether a median ratio meets the goal.
func within(r float64) bool { return r <= ratioGoal && r >= 1/ratioGoal }

// oomMet says whether the member was OOM-killed within one of
// predicted + 1 full LISTs at once; a member that survived maxK LISTs
// meets it only when the prediction too says it survives them.
func oomMet(oomK, predicted, maxK int) bool {
	want := predicted + 1
	if oomK == 0 {
		return want > maxK
	}
	return oomK >= want-1 && oomK <= want+1
}

// render is a table per etcd and size (each case's truth peak, the
// prediction and their ratio), the OOM checks, and the figures it quotes.
func render(obs []observation, ooms []oomCheck) (string, map[string]float64) {
	var b strings.Builder
	figs := map[string]float64{}
	within, compared := 0, 0
	for _, g := range groups(obs) {
		p := g.obs[0].Predicted
		var idle []float64
		for _, o := range g.obs {
			idle = append(idle, float64(o.Predicted.Memory.IdleBytes))
		}
		fmt.Fprintf(&b, "%s, db %s (%s): %s, %d objects, %s listed; idle %s MiB (diagnose data's, median), %d rounds\n",
			g.etcd, g.target, units.FormatBytes(p.DBBytes), p.Resource, p.Keys, units.FormatBytes(p.Bytes), mib(cmp.Median(idle)), len(g.obs))
		fmt.Fprintf(&b, "| LISTs at once | truth peak MiB (range) | predicted MiB | ratio (range) | over idle: truth, predicted MiB | ratio over idle (range) | within %.2fx |\n|---|---|---|---|---|---|---|\n", ratioGoal)
		slug := cmp.Slug(g.etcd + " " + g.target)
		for _, c := range casesOf(g) {
			r, ok := rowOf(g, c)
			if !ok {
				fmt.Fprintf(&b, "| %s | (not measured) | | | | | |\n", c)
				continue
			}
			compared++
			if r.Met {
				within++
			}
			fmt.Fprintf(&b, "| %s | %s (%s-%s) | %s | %s (%s-%s) | %s, %s | %s (%s-%s) | %s |\n", c, mib(r.Truth), mib(r.TruthLo), mib(r.TruthHi),
				mib(r.Predicted), cmp.FmtRatio(r.Ratio), cmp.FmtRatio(r.RatioLo), cmp.FmtRatio(r.RatioHi), mib(r.Over), mib(r.OverPredicted),
				cmp.FmtRatio(r.OverRatio), cmp.FmtRatio(r.OverLo), cmp.FmtRatio(r.OverHi), cmp.YesNo(r.Met))
			cs := slug + "_" + cmp.Slug(c.String())
			figs[cs+"_ratio"], figs[cs+"_ratio_min"], figs[cs+"_ratio_max"] = r.Ratio, r.RatioLo, r.RatioHi
			figs[cs+"_truth_mib"], figs[cs+"_predicted_mib"], figs[cs+"_over_idle_ratio"] = r.Truth/(1<<20), r.Predicted/(1<<20), r.OverRatio
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%d of %d medians within %.2fx (%s)\n", within, compared, ratioGoal, goalSource)
	figs["within"], figs["compared"] = float64(within), float64(compared)
	if len(ooms) > 0 {
		b.WriteString(renderOOM(ooms, figs))
	}
	return b.String(), figs
}

// casesOf is the cases g measured, in the order first measured.
func casesOf(g group) []listCase {
	var cs []listCase
	seen := map[listCase]bool{}
	for _, o := range g.obs {
		for _, r := range o.Cases {
			if !seen[r.listCase] {
				seen[r.listCase] = true
				cs = append(cs, r.listCase)
			}
		}
	}
	return cs
}

// renderOOM is the OOM checks' table: the limit, what diagnose data read
// and predicted in the cgroup, each k's peak and how it ended.
func renderOOM(ooms []oomCheck, figs map[string]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n| OOM check | limit MiB (read by diagnose data) | idle MiB (diagnose data's) | predicted fit | predicted OOM at | OOM at | within one | k: peak VmRSS / cgroup peak MiB |\n|---|---|---|---|---|---|---|---|\n")
	met := 0
	for _, oc := range ooms {
		m := oc.Predicted.Memory
		var steps []string
		for _, s := range oc.Steps {
			end := ""
			if s.Killed != "" {
				end = fmt.Sprintf(" %s, oom_kill +%d", s.Killed, s.OOMKills)
			}
			steps = append(steps, fmt.Sprintf("%d: %s / %s%s", s.K, mib(float64(s.Peak.RSS)), mib(float64(s.PeakCgroup)), end))
		}
		at := "none up to " + fmt.Sprint(oc.MaxK)
		if oc.OOMK > 0 {
			at = fmt.Sprint(oc.OOMK)
		}
		ok := oomMet(oc.OOMK, m.ConcurrentFullLists, oc.MaxK)
		if ok {
			met++
		}
		fmt.Fprintf(&b, "| %s, db %s | %s (%s) | %s | %d | %d | %s | %s | %s |\n", oc.Etcd, oc.Target, mib(float64(oc.LimitBytes)),
			limitRead(oc), mib(float64(m.IdleBytes)), m.ConcurrentFullLists, m.ConcurrentFullLists+1, at,
			cmp.YesNo(ok), strings.Join(steps, "; "))
		slug := cmp.Slug(oc.Etcd + " " + oc.Target)
		figs[slug+"_oom_k"], figs[slug+"_oom_predicted_fit"], figs[slug+"_oom_limit_mib"] = float64(oc.OOMK), float64(m.ConcurrentFullLists), float64(oc.LimitBytes)/(1<<20)
		figs[slug+"_oom_limit_found"] = 0
		if oc.limitFound() {
			figs[slug+"_oom_limit_found"] = 1
		}
	}
	fmt.Fprintf(&b, "\n%d of %d OOM checks within one (%s; the limit: diagnose data's idle memory and %.1f full LISTs' predicted cost)\n", met, len(ooms), oomSource, ooms[0].Lists)
	figs["oom_within"], figs["oom_checks"] = float64(met), float64(len(ooms))
	return b.String()
}

// limitRead says what diagnose data read as the member's limit by
// itself: the cgroup's as set, or another figure and where from.
func limitRead(oc oomCheck) string {
	if oc.limitFound() {
		return "the cgroup's"
	}
	return fmt.Sprintf("%s MiB, %s", mib(float64(oc.ReadLimit)), oc.ReadFrom)
}
