package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"text/tabwriter"

	"etcdbench/bench/internal/cmp"
)

// The pooled comparison. On a shared machine each run's p99 is decided by
// whether a stall fell into its few seconds, so the per-round ratio of two
// runs' p99s swings widely (0.42..3.19 over 13 rounds) and its median
// moves with a few rounds. Pooling puts all of a tool's fdatasyncs of all
// rounds in one distribution, so every stall counts once, in whichever
// run it fell, in proportion to the syncs it slowed; the ratio of the
// pooled percentiles compares the two tools over the same stretch of
// time. Its uncertainty comes from which rounds happened to catch stalls,
// so it is estimated by resampling whole rounds (a cluster bootstrap), a
// round's two runs kept together.

// pooledPercentiles are the percentiles the pooled comparison gives.
var pooledPercentiles = []struct {
	Metric string
	P      float64
}{{metricP50, 50}, {metricP99, 99}, {"fdatasync p99.9", 99.9}}

// Bootstrap settings: resamples of the rounds and the interval's level.
// The seed is fixed so that the same runs give the same interval.
const (
	bootstrapResamples = 2000
	bootstrapLevel     = 0.95
	bootstrapSeed      = 14
)

// pooledTarget is what the pooled p99 ratio etcdbench/fio is held to.
var pooledTarget = cmp.Target{Metric: metricP99 + " pooled", Lo: 0.95, Hi: 1.05,
	Source: "issue 14: the WAL engine's tail is the disk's, p99 within 0.95..1.05 of fio's recipe over at least 9 alternated rounds"}

// Pairs of the pooled comparison, as the tables name them.
const (
	pairEtcd    = "etcdbench / fio"
	pairControl = "fio (control) / fio"
)

// pooledRow is one percentile of one pair, pooled over rounds.
type pooledRow struct {
	Pair    string        `json:"pair"`
	Metric  string        `json:"metric"`
	P       float64       `json:"p"`
	Base    float64       `json:"base_ns"`    // fio's, pooled
	Subject float64       `json:"subject_ns"` // etcdbench's or the control fio's, pooled
	Ratio   cmp.JSONFloat `json:"ratio"`      // Subject / Base
	// Lo and Hi bound the ratio's bootstrap interval at Level.
	Lo    cmp.JSONFloat `json:"interval_lo"`
	Hi    cmp.JSONFloat `json:"interval_hi"`
	Level float64       `json:"interval_level"`
	// RoundMedian, RoundMin and RoundMax are the per-round ratios'
	// median and range, each round's runs alone (from the same
	// histograms).
	RoundMedian cmp.JSONFloat `json:"round_ratio_median"`
	RoundMin    cmp.JSONFloat `json:"round_ratio_min"`
	RoundMax    cmp.JSONFloat `json:"round_ratio_max"`
	Target      *cmp.Target   `json:"target,omitempty"`
	Met         bool          `json:"met"` // the pooled ratio within Target
}

// comparePooled gives a row per pooled percentile for the pair name:
// subject[i] and base[i] are round i's two runs.
func comparePooled(name string, subject, base []dist, target *cmp.Target) []pooledRow {
	sp, bp := newPool(subject), newPool(base)
	ps := make([]float64, len(pooledPercentiles))
	for i, p := range pooledPercentiles {
		ps[i] = p.P
	}
	all := make([]int, len(subject))
	for i := range all {
		all[i] = 1
	}
	qs, qb := sp.quantiles(all, ps), bp.quantiles(all, ps)

	perRound := make([][]float64, len(ps)) // [percentile][round]
	one := make([]int, len(subject))
	for r := range subject {
		clear(one)
		one[r] = 1
		s, b := sp.quantiles(one, ps), bp.quantiles(one, ps)
		for k := range ps {
			perRound[k] = append(perRound[k], cmp.Ratio(s[k], b[k]))
		}
	}

	boot := make([][]float64, len(ps)) // [percentile][resample]
	rng := rand.New(rand.NewPCG(bootstrapSeed, bootstrapSeed))
	w := make([]int, len(subject))
	for range bootstrapResamples {
		clear(w)
		for range subject {
			w[rng.IntN(len(subject))]++
		}
		s, b := sp.quantiles(w, ps), bp.quantiles(w, ps)
		for k := range ps {
			boot[k] = append(boot[k], cmp.Ratio(s[k], b[k]))
		}
	}

	var rows []pooledRow
	for k, p := range pooledPercentiles {
		lo, hi := interval(boot[k], bootstrapLevel)
		rlo, rhi := cmp.MinMax(perRound[k])
		row := pooledRow{Pair: name, Metric: p.Metric, P: p.P, Base: qb[k], Subject: qs[k],
			Ratio: cmp.JSONFloat(cmp.Ratio(qs[k], qb[k])), Lo: cmp.JSONFloat(lo), Hi: cmp.JSONFloat(hi), Level: bootstrapLevel,
			RoundMedian: cmp.JSONFloat(cmp.Median(perRound[k])), RoundMin: cmp.JSONFloat(rlo), RoundMax: cmp.JSONFloat(rhi)}
		if target != nil && p.P == 99 {
			row.Target, row.Met = target, target.Met(float64(row.Ratio))
		}
		rows = append(rows, row)
	}
	return rows
}

// interval is the central level interval of xs (the percentile
// bootstrap), NaNs left out; NaN, NaN when nothing is left.
func interval(xs []float64, level float64) (lo, hi float64) {
	s := slices.DeleteFunc(slices.Clone(xs), math.IsNaN)
	if len(s) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(s)
	tail := (1 - level) / 2 * float64(len(s))
	i := int(math.Floor(tail))
	j := max(int(math.Ceil(float64(len(s))-tail))-1, i)
	return s[i], s[min(j, len(s)-1)]
}

// summarizePooled compares the pooled percentiles of etcdbench and fio,
// and of the control fio and fio, over the rounds whose runs all carry
// their histograms; nil when fewer than cmp.MinRounds do.
func summarizePooled(rs []round) []pooledRow {
	var etcd, fio, control, fioC []dist
	for _, r := range rs {
		if len(r.Fio.dist.Values) == 0 {
			continue
		}
		if len(r.Etcd.dist.Values) > 0 {
			etcd, fio = append(etcd, r.Etcd.dist), append(fio, r.Fio.dist)
		}
		if r.Control != nil && len(r.Control.dist.Values) > 0 {
			control, fioC = append(control, r.Control.dist), append(fioC, r.Fio.dist)
		}
	}
	var rows []pooledRow
	if len(etcd) >= cmp.MinRounds {
		rows = append(rows, comparePooled(pairEtcd, etcd, fio, &pooledTarget)...)
	}
	if len(control) >= cmp.MinRounds {
		rows = append(rows, comparePooled(pairControl, control, fioC, nil)...)
	}
	return rows
}

// renderPooled prints the pooled comparison.
func renderPooled(w io.Writer, rounds int, rows []pooledRow) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nPOOLED over %d rounds (each kind of run's fdatasyncs of all rounds in one distribution; ratio: of its percentiles;\n", rounds)
	fmt.Fprintf(w, "interval: %.0f %% bootstrap over rounds, %d resamples of whole rounds; per round: the median and range of each round's own ratio)\n",
		bootstrapLevel*100, bootstrapResamples)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pair\tmetric\tfio\tother\tpooled ratio\tinterval\tper round\ttarget\tmet")
	fr, fd := cmp.FmtRatio, func(x float64) string { return cmp.FmtValue(cmp.UnitDuration, x) }
	for _, r := range rows {
		band, met := "info", "-"
		if r.Target != nil {
			band, met = cmp.FmtBand(*r.Target), cmp.YesNo(r.Met)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s..%s\t%s (%s..%s)\t%s\t%s\n", r.Pair, r.Metric, fd(r.Base), fd(r.Subject),
			fr(float64(r.Ratio)), fr(float64(r.Lo)), fr(float64(r.Hi)),
			fr(float64(r.RoundMedian)), fr(float64(r.RoundMin)), fr(float64(r.RoundMax)), band, met)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "Pooled target: %s. The control's interval is what this machine's noise allows.\n", pooledTarget.Source)
	return err
}
