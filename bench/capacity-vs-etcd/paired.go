package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/testutil/zoo"
)

// pairedRun is one round's --paired measurement on one real etcd: the
// truth's search and etcdbench's etcd side on the same member, one after
// the other in an order that alternates with the round, nothing
// restarted between them. Unpaired measurements run each on a member of
// its own, minutes apart, and on a busy machine the truth moves between
// them by more than the goal.
type pairedRun struct {
	Etcd  string    `json:"etcd"`
	Truth truth     `json:"truth"`
	Side  *measured `json:"etcd_side,omitempty"` // nil when it did not finish
	// Ratio is Side's rate over Truth's highest passing rate (ratio; null
	// when +Inf: a side that carried a rate where the truth carried none),
	// as measured; the summary computes it again from the two answers.
	Ratio *cmp.JSONFloat `json:"ratio,omitempty"`
	// Order is the halves in the order they ran, Load the 1-minute load
	// average when each started.
	Order []string `json:"order"`
	Load  []string `json:"load"`
}

// The halves of a paired run, in odd rounds' order.
const (
	halfTruth = "truth"
	halfSide  = "etcd side"
)

// paired starts k in p and runs on that one member the truth's search
// (searchOn) and etcdbench's etcd side (sideOn), in round n's order
// (cmp.Alternate), then stops it. The member's data carry over from the
// first half to the second: the order alternates so that neither half
// always meets the other's. On a burst bucket both halves start with the
// credits spent: the truth spends them before each of its steps, the
// etcd side once before its sweep.
func (m measurer) paired(ctx context.Context, k etcdKind, p *zoo.Place, n int) (pairedRun, error) {
	pr := pairedRun{Etcd: k.Name, Truth: truth{Etcd: k.Name}}
	srv, err := k.start(ctx, p)
	if err != nil {
		return pr, err
	}
	type half struct {
		name string
		do   func() error
	}
	halves := []half{
		{halfTruth, func() error {
			t, err := searchOn(ctx, k.Name, srv, p, m.dev, m.step, m.search, m.progress)
			pr.Truth = t
			return err
		}},
		{halfSide, func() error {
			if p.Spend != nil {
				if err := p.Spend(ctx); err != nil {
					return err
				}
			}
			s, err := sideOn(ctx, m.env.Etcdbench, srv.URL(), m.o.PairedStep)
			if err != nil {
				return err
			}
			pr.Side = &s
			return nil
		}},
	}
	for _, h := range cmp.Alternate(n, halves) {
		pr.Order, pr.Load = append(pr.Order, h.name), append(pr.Load, loadavg())
		fmt.Fprintf(m.progress, "  %s paired: %s (load %s) ...\n", k.Name, h.name, pr.Load[len(pr.Load)-1])
		if err := h.do(); err != nil {
			return pr, errors.Join(fmt.Errorf("%s: %w", h.name, err), srv.Stop())
		}
	}
	r := cmp.JSONFloat(ratio(pr.Side.Rate, pr.Truth.HighestPass))
	pr.Ratio = &r
	fmt.Fprintf(m.progress, "  %s paired: etcd side %.0f puts/s, truth %.0f: %.2f\n", k.Name, pr.Side.Rate, pr.Truth.HighestPass, float64(r))
	return pr, srv.Stop()
}

// sideArgs are the arguments of `etcdbench etcd capacity` on the member
// at url, its steps step long: the etcd side of capacity's sweep (its
// short steps held up to 10 s where their few observations decide) on a
// real etcd.
func sideArgs(url, step string) []string {
	return []string{"etcd", "capacity", "--endpoints", url, "--yes", "--step", step, "--no-trace", "--no-progress", "-o", "json"}
}

// sideOn runs the etcd side on the member at url. It runs outside the
// place's cgroup: it writes only to the member, which is inside it.
func sideOn(ctx context.Context, bin, url, step string) (measured, error) {
	c, err := cmp.RunChild(ctx, []int{0, 1}, bin, sideArgs(url, step)...)
	if err != nil {
		return measured{}, err
	}
	s, err := parseSweep(c.Stdout)
	if err != nil {
		return s, fmt.Errorf("etcd capacity on %s: %w", url, err)
	}
	s.Wall = c.Wall.Seconds()
	return s, nil
}

// anyPaired says whether some round of rows was paired.
func anyPaired(rows []row) bool {
	for _, r := range rows {
		for _, rd := range r.Rounds {
			if len(rd.Paired) > 0 {
				return true
			}
		}
	}
	return false
}

// unpairedRows are rows with their unpaired rounds alone, rows without
// any left out (runs merged by --from: a paired one and an older one).
func unpairedRows(rows []row) []row {
	var out []row
	for _, r := range rows {
		u := r
		u.Rounds = slices.DeleteFunc(slices.Clone(r.Rounds), func(rd round) bool { return len(rd.Paired) > 0 })
		if len(u.Rounds) > 0 {
			out = append(out, u)
		}
	}
	return out
}

// pairedSummary is one storage's paired rounds on one real etcd: the
// answer --paired gives, the median of the rounds' side / truth.
type pairedSummary struct {
	Storage string `json:"storage"`
	Etcd    string `json:"etcd"`
	Rounds  []int  `json:"rounds"`
	// Sides and Truths are a round each: the etcd side's answer and the
	// truth's highest passing rate on the same member; Fails the truth's
	// lowest failing rate (0: none failed).
	Sides  []float64 `json:"etcd_side"`
	Truths []float64 `json:"truth"`
	Fails  []float64 `json:"truth_lowest_fail"`
	// Ratios are side / truth, a round each (ratio's rules: both 0 is 1;
	// null is +Inf, a side that carried a rate where the truth did not).
	Ratios []cmp.JSONFloat `json:"ratios"`
	// Ratio is their median, Min and Max their range.
	Ratio cmp.JSONFloat `json:"ratio"`
	Min   cmp.JSONFloat `json:"ratio_min"`
	Max   cmp.JSONFloat `json:"ratio_max"`
	// Within says whether Ratio lies within the goal (1.25x either way).
	Within bool `json:"within_goal"`
	// Estimates are capacity's estimate and EstimateRatios it over the
	// paired truth, a round each where capacity ran (on its own member,
	// in the same round).
	Estimates      []float64       `json:"estimates,omitempty"`
	EstimateRatios []cmp.JSONFloat `json:"estimate_ratios,omitempty"`
	// load is the 1-minute load average at each half, a round each.
	load []string
}

// floats are v as float64s.
func floats(v []cmp.JSONFloat) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// summarizePaired is every storage's paired rounds, a summary per real
// etcd (in kindNames' order) that has a round whose both halves finished.
func summarizePaired(rows []row) []pairedSummary {
	var out []pairedSummary
	for _, r := range rows {
		if r.Skipped != "" {
			continue
		}
		for _, k := range kindNames {
			s := pairedSummary{Storage: r.Storage, Etcd: k}
			for _, rd := range r.Rounds {
				for _, pr := range rd.Paired {
					if pr.Etcd != k || pr.Side == nil {
						continue
					}
					s.Rounds = append(s.Rounds, rd.N)
					s.Sides, s.Truths, s.Fails = append(s.Sides, pr.Side.Rate), append(s.Truths, pr.Truth.HighestPass), append(s.Fails, pr.Truth.LowestFail)
					s.Ratios = append(s.Ratios, cmp.JSONFloat(ratio(pr.Side.Rate, pr.Truth.HighestPass)))
					if c := rd.Capacity; c != nil {
						s.Estimates = append(s.Estimates, c.Rate)
						s.EstimateRatios = append(s.EstimateRatios, cmp.JSONFloat(ratio(c.Rate, pr.Truth.HighestPass)))
					}
					s.load = append(s.load, strings.Join(pr.Load, ","))
				}
			}
			if len(s.Ratios) == 0 {
				continue
			}
			v := floats(s.Ratios)
			m := median(v)
			s.Ratio, s.Min, s.Max = cmp.JSONFloat(m), cmp.JSONFloat(slices.Min(v)), cmp.JSONFloat(slices.Max(v))
			s.Within = m >= 1/goal && m <= goal
			out = append(out, s)
		}
	}
	return out
}

// pairedFigures are the --results figures of the paired summaries:
// <storage>_<etcd>_paired_ratio (the median side / truth), _ratio_min,
// _ratio_max, _side and _truth (the medians of the two answers) and
// _within_goal (1 or 0); paired_ratios and paired_ratios_within_goal
// count them. Capacity's estimate over the paired truth is the storages'
// <storage>_<etcd>_ratio, as for a truth on a member of its own. An
// infinite ratio has no figure (JSON has no Inf).
func pairedFigures(ps []pairedSummary) map[string]float64 {
	f := map[string]float64{}
	if len(ps) == 0 {
		return f
	}
	within := 0
	for _, s := range ps {
		key := cmp.Slug(s.Storage) + "_" + cmp.Slug(s.Etcd) + "_paired"
		for name, x := range map[string]float64{"_ratio": float64(s.Ratio), "_ratio_min": float64(s.Min), "_ratio_max": float64(s.Max),
			"_side": median(s.Sides), "_truth": median(s.Truths)} {
			if !math.IsInf(x, 0) && !math.IsNaN(x) {
				f[key+name] = x
			}
		}
		f[key+"_within_goal"] = 0
		if s.Within {
			f[key+"_within_goal"] = 1
			within++
		}
	}
	f["paired_ratios"], f["paired_ratios_within_goal"] = float64(len(ps)), float64(within)
	return f
}

// joinRates prints rates a round each, "-" for none.
func joinRates(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.0f", x)
	}
	return strings.Join(s, ",")
}

// printPaired prints the paired table: how many medians meet the goal,
// then a row per storage and real etcd.
func printPaired(w io.Writer, rows []row) error {
	ps := summarizePaired(rows)
	within := 0
	for _, s := range ps {
		if s.Within {
			within++
		}
	}
	fmt.Fprintf(w, "\nPAIRED: %d of %d medians of etcd side / truth within %.2fx (per storage and real etcd, over the rounds; the two on one member, in alternating order)\n", within, len(ps), goal)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "storage\tetcd\trounds\tetcd side (puts/s)\ttruth passes / fails at\tside / truth\trange\twithin 1.25x\tcapacity's estimate\testimate / truth\tload (1 min) at each half")
	for _, r := range rows {
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%s\tskipped: %s\n", r.Storage, r.Skipped)
		}
		for _, s := range ps {
			if s.Storage == r.Storage {
				printPairedRow(tw, s)
			}
		}
	}
	return tw.Flush()
}

// printPairedRow prints one storage's paired rounds on one real etcd.
func printPairedRow(tw io.Writer, s pairedSummary) {
	fails := make([]string, len(s.Fails))
	for i, f := range s.Fails {
		fails[i] = "-"
		if f > 0 {
			fails[i] = fmt.Sprintf("%.0f", f)
		}
	}
	fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s / %s\t%.2f\t%.2f..%.2f\t%s\t%s\t%s\t%s\n", s.Storage, s.Etcd, len(s.Rounds),
		joinRates(s.Sides), joinRates(s.Truths), strings.Join(fails, ","), float64(s.Ratio), float64(s.Min), float64(s.Max),
		cmp.YesNo(s.Within), spread(s.Estimates, "%.0f"), spread(floats(s.EstimateRatios), "%.2f"), strings.Join(s.load, " | "))
}
