package tune

import (
	"fmt"
	"math"

	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/verdict"
)

// Metric is one figure of the comparison table.
type Metric struct {
	// ID names the figure in the summary workload: c1_<ID>_median...
	ID    string
	Title string
	Unit  string // "ops/s", "s" or "count"
	// HigherIsBetter says which way a difference is an improvement.
	HigherIsBetter bool
	of             func(r Run) (float64, bool)
}

// Metrics are the figures tune compares, in table order. The disk figures
// are etcd's own histograms, one per member; a combination is as slow as
// its slowest member, so the table takes the maximum over members.
var Metrics = []Metric{
	{ID: "throughput", Title: "throughput", Unit: "ops/s", HigherIsBetter: true, of: func(r Run) (float64, bool) {
		w := r.Workload()
		return w.OpsPerSec, w.Ops > 0
	}},
	{ID: "latency_p50", Title: "latency p50", Unit: "s", of: latencyAt(50)},
	{ID: "latency_p99", Title: "latency p99", Unit: "s", of: latencyAt(99)},
	{ID: "wal_fsync_p99", Title: "WAL fsync p99", Unit: "s", of: maxOverMembers(func(m observe.Member) float64 { return m.WALFsyncP(0.99) })},
	{ID: "backend_commit_p99", Title: "backend commit p99", Unit: "s", of: maxOverMembers(func(m observe.Member) float64 { return m.BackendCommitP(0.99) })},
	{ID: "leader_changes", Title: "leader changes", Unit: "count", of: maxOverMembers(func(m observe.Member) float64 { return m.LeaderChanges })},
	{ID: "late_heartbeats", Title: "late heartbeats", Unit: "count", of: maxOverMembers(func(m observe.Member) float64 { return m.LateHeartbeats })},
	// failover is the time to a new leader after the leader was killed
	// (three members, after the load).
	{ID: "failover", Title: "new leader after a kill", Unit: "s", of: func(r Run) (float64, bool) {
		if r.Failover == nil {
			return 0, false
		}
		return r.Failover.Took.Seconds(), true
	}},
}

// latencyAt reads percentile p of the load's request latency, in seconds.
func latencyAt(p float64) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		l := r.Request
		if l == nil || l.Count == 0 {
			return 0, false
		}
		ns, ok := l.At(p)
		return float64(ns) / 1e9, ok
	}
}

// maxOverMembers is the largest of a figure over the run's members;
// false when no member gives it.
func maxOverMembers(of func(observe.Member) float64) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		best, ok := math.Inf(-1), false
		for _, m := range r.Members {
			if v := of(m); !math.IsNaN(v) && v > best {
				best, ok = v, true
			}
		}
		return best, ok
	}
}

// Diff is a difference larger than the noise: one figure of two
// combinations whose ranges over the rounds do not overlap.
type Diff struct {
	Metric        *Metric
	Better, Worse int // combination indexes
	// Ratio is the better median over the worse one.
	Ratio float64
}

// Summary is the comparison of the combinations.
type Summary struct {
	// Load describes the load every run sent.
	Load         string
	Combinations []Combination
	Rounds       int
	// Runs are the finished runs, in the order they ran.
	Runs []Run
	// Cells[c][m] is Metrics[m] of combination c over its rounds.
	Cells [][]Spread
	// Worst[c] is the worst verdict of combination c's runs; nil without
	// a finished run.
	Worst []*verdict.Status
	// Diffs are the differences larger than the noise, by metric.
	Diffs []Diff
	// Chance is ChanceOfSeparation at the rounds done, the chance of a
	// Diff for one figure of one pair by noise alone; NaN below MinRounds.
	Chance float64
	Notes  []string
}

// Summarize compares the combinations over the runs that finished. A run
// that was interrupted or has no load workload is left out.
func Summarize(load string, combos []Combination, rounds int, runs []Run) Summary {
	s := Summary{Load: load, Combinations: combos, Rounds: rounds, Chance: math.NaN()}
	vals := make([][][]float64, len(combos))
	for i := range vals {
		vals[i] = make([][]float64, len(Metrics))
	}
	s.Worst = make([]*verdict.Status, len(combos))
	done := make([]int, len(combos))
	for _, r := range runs {
		w := r.Workload()
		if w == nil || r.Result.Interrupted {
			continue
		}
		s.Runs = append(s.Runs, r)
		c := r.Combination
		done[c]++
		for m := range Metrics {
			if v, ok := Metrics[m].of(r); ok {
				vals[c][m] = append(vals[c][m], v)
			}
		}
		st := verdict.Worst(w.Verdicts)
		if s.Worst[c] == nil || st > *s.Worst[c] {
			s.Worst[c] = &st
		}
	}
	s.Cells = make([][]Spread, len(combos))
	minDone := rounds
	for c := range combos {
		s.Cells[c] = make([]Spread, len(Metrics))
		for m := range Metrics {
			s.Cells[c][m] = NewSpread(vals[c][m])
		}
		minDone = min(minDone, done[c])
		s.Notes = append(s.Notes, combos[c].Warnings...)
	}
	if minDone >= MinRounds {
		s.Chance = ChanceOfSeparation(minDone, minDone)
	}
	for m := range Metrics {
		for a := range combos {
			for b := a + 1; b < len(combos); b++ {
				if !Separated(s.Cells[a][m], s.Cells[b][m]) {
					continue
				}
				s.Diffs = append(s.Diffs, newDiff(&Metrics[m], a, b, s.Cells[a][m].Median, s.Cells[b][m].Median))
			}
		}
	}
	return s
}

func newDiff(m *Metric, a, b int, ma, mb float64) Diff {
	d := Diff{Metric: m, Better: a, Worse: b}
	if (mb > ma) == m.HigherIsBetter {
		d.Better, d.Worse = b, a
		ma, mb = mb, ma
	}
	d.Ratio = ma / mb // better over worse
	return d
}

// Workload is the summary as a result workload: the medians and bounds
// as figures named <combination>_<metric>_median|min|max, the
// combinations and the order of the runs as parameters, the differences
// larger than the noise as notes.
func (s Summary) Workload() result.Workload {
	combos := make([]map[string]any, len(s.Combinations))
	for i, c := range s.Combinations {
		combos[i] = map[string]any{"id": c.ID(), "settings": c.Settings()}
	}
	order := make([]string, len(s.Runs))
	for i, r := range s.Runs {
		order[i] = fmt.Sprintf("r%d:%s", r.Round, s.Combinations[r.Combination].ID())
	}
	w := result.Workload{
		Name:        "tune",
		Description: "comparison of the combinations of the varied settings: median and range over the rounds, and which differences are larger than the noise (ranges that do not overlap)",
		Parameters: map[string]any{
			"load":         s.Load,
			"combinations": combos,
			"rounds":       s.Rounds,
			"order":        order,
			"noise_rule":   "ranges over the rounds do not overlap",
		},
	}
	if !math.IsNaN(s.Chance) {
		w.Parameters["chance_per_pair"] = s.Chance
	}
	// The result schema wants arrays, not nulls, and a stop mode: the
	// tune stops after a count of runs.
	w.Latencies, w.Series, w.Verdicts = []result.Latency{}, []stats.SecondSample{}, []verdict.Verdict{}
	w.Stop = result.Stop{Mode: "count", Reason: fmt.Sprintf("%d of %d runs finished", len(s.Runs), s.Rounds*len(s.Combinations))}
	w.Ops = int64(len(s.Runs))
	for _, r := range s.Runs {
		if rw := r.Workload(); rw != nil {
			w.DurationNs += rw.DurationNs
		}
	}
	for c, combo := range s.Combinations {
		for m, met := range Metrics {
			sp := s.Cells[c][m]
			if sp.N() == 0 {
				continue
			}
			for _, x := range []struct {
				id string
				v  float64
			}{{"median", sp.Median}, {"min", sp.Min}, {"max", sp.Max}} {
				w.Figures = append(w.Figures, result.Figure{
					Name: combo.ID() + "_" + met.ID + "_" + x.id, Value: x.v, Unit: met.Unit,
					Description: fmt.Sprintf("%s of %s over %d round(s): %s", met.Title, combo.Label(), sp.N(), x.id),
				})
			}
		}
	}
	w.Notes = append(w.Notes, s.DiffLines()...)
	w.Notes = append(w.Notes, s.Notes...)
	return w
}

// DiffLines says in words which differences are larger than the noise.
func (s Summary) DiffLines() []string {
	if math.IsNaN(s.Chance) {
		return []string{fmt.Sprintf("no difference can be told from the noise with fewer than %d finished rounds of every combination; use --rounds 3 or more", MinRounds)}
	}
	if len(s.Diffs) == 0 {
		return []string{"no difference is larger than the noise: for every figure the ranges over the rounds overlap"}
	}
	var out []string
	for _, d := range s.Diffs {
		b, w := s.Combinations[d.Better], s.Combinations[d.Worse]
		m := metricIndex(d.Metric)
		out = append(out, fmt.Sprintf("%s: %s (%s) %s is better than %s (%s) %s: %s",
			d.Metric.Title, b.ID(), b.Label(), format(s.Cells[d.Better][m].Median, d.Metric.Unit),
			w.ID(), w.Label(), format(s.Cells[d.Worse][m].Median, d.Metric.Unit), ratioText(s, d)))
	}
	return out
}

// ratioText gives the ratio of the medians, better over worse.
func ratioText(s Summary, d Diff) string {
	if math.IsInf(d.Ratio, 0) || math.IsNaN(d.Ratio) {
		return "ratio undefined (a median of 0)"
	}
	return fmt.Sprintf("%s/%s = %.2f", s.Combinations[d.Better].ID(), s.Combinations[d.Worse].ID(), d.Ratio)
}

func metricIndex(m *Metric) int {
	for i := range Metrics {
		if &Metrics[i] == m {
			return i
		}
	}
	return -1
}
