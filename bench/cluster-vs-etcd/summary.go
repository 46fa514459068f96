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
}

func spreadOf(xs []float64) spread {
	lo, hi := cmp.MinMax(xs)
	return spread{cmp.JSONFloat(cmp.Median(xs)), cmp.JSONFloat(lo), cmp.JSONFloat(hi)}
}

// sideSummary is one etcdbench command's answers at one round trip,
// against the truth of the same rounds.
type sideSummary struct {
	Side string `json:"side"`
	// Rounds counts the rounds with both this side's answer and the
	// truth's.
	Rounds int    `json:"rounds"`
	Rate   spread `json:"rate"`
	// P99 is in seconds.
	P99       spread `json:"p99_s"`
	RateRatio spread `json:"rate_ratio"`
	P99Ratio  spread `json:"p99_ratio"`
	// RateWithin and P99Within say the median ratio lies within the goal
	// (1/goal..goal); Met that both do over at least cmp.MinRounds rounds.
	RateWithin bool `json:"rate_within_goal"`
	P99Within  bool `json:"p99_within_goal"`
	Met        bool `json:"goal_met"`
	// Machines is the three machines' prediction (not judged).
	Machines spread `json:"machines_rate"`
}

// rttSummary is one round trip's measurements over the rounds.
type rttSummary struct {
	RTT       time.Duration `json:"rtt_ns"`
	Rounds    int           `json:"rounds"` // rounds with a truth
	TruthRate spread        `json:"truth_rate"`
	TruthP99  spread        `json:"truth_p99_s"`
	Sides     []sideSummary `json:"sides"`
	Notes     []string      `json:"notes,omitempty"`
}

// rateP99 is measurement which's rate and p99 (0, 0 when it has none).
func (ms measurement) rateP99(which string) (float64, time.Duration) {
	switch which {
	case sideTruth:
		if ms.Truth != nil {
			return ms.Truth.HighestPass, ms.Truth.P99
		}
	case sideEtcdCapacity:
		if ms.EtcdCapacity != nil {
			return ms.EtcdCapacity.Rate, ms.EtcdCapacity.P99
		}
	case sideCapacity:
		if ms.Capacity != nil {
			return ms.Capacity.Rate, ms.Capacity.P99
		}
	}
	return 0, 0
}

func (ms measurement) side(which string) *sideAnswer {
	if which == sideEtcdCapacity {
		return ms.EtcdCapacity
	}
	return ms.Capacity
}

// rateRatio is a side's rate over the truth's: 1 when neither carried
// any rate (they agree), +Inf when only the side did.
func rateRatio(side, truth float64) float64 {
	if truth == 0 {
		if side == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return side / truth
}

// p99Ratio is a side's p99 over the truth's, NaN when either has none.
func p99Ratio(side, truth time.Duration) float64 {
	if side <= 0 || truth <= 0 {
		return math.NaN()
	}
	return float64(side) / float64(truth)
}

// within says x lies within goal of 1 either way.
func within(x, goal float64) bool { return x >= 1/goal && x <= goal }

// summarize is each round trip's summary over the measurements, in the
// order of rtts.
func summarize(ms []measurement, rtts []time.Duration, goal float64) []rttSummary {
	var out []rttSummary
	for _, rtt := range rtts {
		s := rttSummary{RTT: rtt}
		var rates, p99s []float64
		for _, m := range ms {
			if m.RTT != rtt {
				continue
			}
			for _, n := range m.Notes {
				s.Notes = append(s.Notes, fmt.Sprintf("round %d: %s", m.Round, n))
			}
			if m.Truth == nil {
				continue
			}
			s.Rounds++
			rates = append(rates, m.Truth.HighestPass)
			p99s = append(p99s, seconds(m.Truth.P99))
		}
		s.TruthRate, s.TruthP99 = spreadOf(rates), spreadOf(p99s)
		for _, which := range []string{sideEtcdCapacity, sideCapacity} {
			ss := sideSummary{Side: which}
			var rate, p99, rr, pr, machines []float64
			for _, m := range ms {
				a := m.side(which)
				if m.RTT != rtt || a == nil {
					continue
				}
				rate, p99 = append(rate, a.Rate), append(p99, seconds(a.P99))
				if a.Machines > 0 {
					machines = append(machines, a.Machines)
				}
				if m.Truth != nil {
					ss.Rounds++
					rr = append(rr, rateRatio(a.Rate, m.Truth.HighestPass))
					pr = append(pr, p99Ratio(a.P99, m.Truth.P99))
				}
			}
			if len(rate) == 0 {
				continue
			}
			ss.Rate, ss.P99, ss.RateRatio, ss.P99Ratio, ss.Machines = spreadOf(rate), spreadOf(p99), spreadOf(rr), spreadOf(pr), spreadOf(machines)
			ss.RateWithin, ss.P99Within = within(float64(ss.RateRatio.Median), goal), within(float64(ss.P99Ratio.Median), goal)
			ss.Met = ss.RateWithin && ss.P99Within && ss.Rounds >= cmp.MinRounds
			s.Sides = append(s.Sides, ss)
		}
		out = append(out, s)
	}
	return out
}

// seconds is d in seconds, NaN for 0 (none).
func seconds(d time.Duration) float64 {
	if d <= 0 {
		return math.NaN()
	}
	return d.Seconds()
}

// fmtSpread is "median (min-max)", or the median alone when they agree;
// "-" for none.
func fmtSpread(s spread, f func(float64) string) string {
	m, lo, hi := float64(s.Median), float64(s.Min), float64(s.Max)
	switch {
	case math.IsNaN(m):
		return "-"
	case lo == hi:
		return f(m)
	}
	return fmt.Sprintf("%s (%s-%s)", f(m), f(lo), f(hi))
}

func fmtRate(x float64) string { return fmt.Sprintf("%.0f", x) }

func fmtRatio(x float64) string {
	if math.IsInf(x, 1) {
		return "+Inf"
	}
	return fmt.Sprintf("%.2f", x)
}

func fmtMs(x float64) string { return fmt.Sprintf("%.1fms", x*1e3) }

// fmtP99 is a p99 for a progress line.
func fmtP99(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmtMs(d.Seconds())
}

// withinWord is whether a median ratio lies within the goal: "n/a"
// when there is no ratio (neither side has a p99, say).
func withinWord(s spread, in bool) string {
	switch {
	case math.IsNaN(float64(s.Median)):
		return "n/a"
	case in:
		return "yes"
	}
	return "no"
}

// sideTitle is a side's name in the table.
var sideTitle = map[string]string{sideEtcdCapacity: "etcd capacity", sideCapacity: "capacity"}

// printTable prints the summary: a row per round trip and etcdbench
// command, the goal per command, and the notes.
func printTable(w io.Writer, sum []rttSummary, goal float64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "round trip\trounds\ttruth (puts/s)\ttruth p99\tetcdbench\trate (puts/s)\trate / truth\tp99\tp99 / truth\twithin "+fmtRatio(goal)+"x (rate, p99)\t3 machines (puts/s)")
	for _, s := range sum {
		lead := fmt.Sprintf("%v\t%d\t%s\t%s", s.RTT, s.Rounds, fmtSpread(s.TruthRate, fmtRate), fmtSpread(s.TruthP99, fmtMs))
		if len(s.Sides) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\n", lead)
		}
		for _, ss := range s.Sides {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s, %s\t%s\n", lead, sideTitle[ss.Side], fmtSpread(ss.Rate, fmtRate), fmtSpread(ss.RateRatio, fmtRatio),
				fmtSpread(ss.P99, fmtMs), fmtSpread(ss.P99Ratio, fmtRatio), withinWord(ss.RateRatio, ss.RateWithin), withinWord(ss.P99Ratio, ss.P99Within), fmtSpread(ss.Machines, fmtRate))
		}
	}
	tw.Flush()
	for _, side := range []string{sideEtcdCapacity, sideCapacity} {
		met, of := 0, 0
		for _, s := range sum {
			for _, ss := range s.Sides {
				if ss.Side == side {
					of++
					if ss.Met {
						met++
					}
				}
			}
		}
		if of > 0 {
			fmt.Fprintf(w, "%s: goal met at %d of %d round trips (issue 43: rate and request p99 medians within %sx of the truth's, >= %d rounds, at every round trip)\n",
				sideTitle[side], met, of, fmtRatio(goal), cmp.MinRounds)
		}
	}
	var notes []string
	for _, s := range sum {
		for _, n := range s.Notes {
			notes = append(notes, fmt.Sprintf("  %v %s", s.RTT, n))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "failed measurements:\n%s\n", strings.Join(notes, "\n"))
	}
}

// figures are the summary's figures by name for the --results file:
// rtt_<rtt>_truth_rate, ..._truth_p99_ms, and per side
// rtt_<rtt>_<side>_rate, _rate_ratio (_min, _max), _p99_ms, _p99_ratio
// (_min, _max), _within_goal and _machines; a figure with no finite
// value is left out.
func figures(sum []rttSummary) map[string]float64 {
	out := map[string]float64{}
	put := func(k string, v cmp.JSONFloat) {
		if x := float64(v); !math.IsNaN(x) && !math.IsInf(x, 0) {
			out[k] = x
		}
	}
	met := 0
	for _, s := range sum {
		k := "rtt_" + cmp.Slug(s.RTT.String())
		put(k+"_rounds", cmp.JSONFloat(s.Rounds))
		put(k+"_truth_rate", s.TruthRate.Median)
		put(k+"_truth_p99_ms", s.TruthP99.Median*1e3)
		for _, ss := range s.Sides {
			sk := k + "_" + cmp.Slug(ss.Side)
			put(sk+"_rate", ss.Rate.Median)
			put(sk+"_rate_ratio", ss.RateRatio.Median)
			put(sk+"_rate_ratio_min", ss.RateRatio.Min)
			put(sk+"_rate_ratio_max", ss.RateRatio.Max)
			put(sk+"_p99_ms", ss.P99.Median*1e3)
			put(sk+"_p99_ratio", ss.P99Ratio.Median)
			put(sk+"_p99_ratio_min", ss.P99Ratio.Min)
			put(sk+"_p99_ratio_max", ss.P99Ratio.Max)
			put(sk+"_machines", ss.Machines.Median)
			w := 0.0
			if ss.Met {
				w, met = 1, met+1
			}
			out[sk+"_within_goal"] = w
		}
	}
	out["goals_met"] = float64(met)
	return out
}
