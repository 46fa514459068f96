package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// Config says which rates a sweep tries and how it judges them.
type Config struct {
	// Start is the first offered rate; Factor (> 1) the ladder's ratio
	// between steps; Min and Max bound the rates tried.
	Start, Factor, Min, Max float64
	// Resolution ends the bisection once the lowest failing rate is
	// within this fraction above the highest passing one (0.1: 10 %).
	Resolution float64
	// Confidence is the overall level of the sweep's verdicts, shared
	// among its steps.
	Confidence float64
	// Unit names what the rate counts ("writes/s"); Criterion what every
	// step must meet, in words, for the report.
	Unit, Criterion string
	// Limit is the latency limit the steps' p99 is judged against, in
	// ns: the bend's diagnosis compares the sync times with it.
	LimitNs int64
	// Marks are reference loads to say whether the capacity carries;
	// Sizes the cluster sizes of etcd's hardware guide it fits.
	Marks, Sizes []result.CapacityMark
	// OnStep, if set, is called before each step.
	OnStep func(i int, rate float64, phase string)
	// NoProbe leaves out the probe above the knee: a shorter budget
	// that needs the answer, not the bend's evidence.
	NoProbe bool
	// From, when set below Start, is the light load a climb would have
	// started from had an earlier measurement not placed Start higher
	// (check's etcd side starts at half what its put load carried): a
	// Start that fails (and fails again) is not descended from, nor are
	// rungs above it tried; the climb starts again from From, up to the
	// rung below Start, as it would have without it. On a busy machine a
	// descent from a failing start lands where one step passes by luck.
	From float64
	// Recheck, when set, says whether the answer's step (the highest
	// rate that passed) must be run again, longer, before it stands: a
	// side whose short steps are not held (check --quick) passes near
	// its limits where a real etcd's ten seconds fail. The step function
	// runs a PhaseRecheck step for longer; the rate stands on a majority
	// of Windows runs (recheck), and one that falls takes the answer down
	// to the highest pass below it, without a new bisection.
	Recheck func(result.CapacityStep) bool
}

// Windows is how many runs at the answer's rate, its own step among
// them, judge it when Config.Recheck asks: a pass near a limit is one
// draw of a tail, and on a machine whose neighbours keep a real etcd's
// p99 at its limit every ten-second window is a coin flip, so one run
// decides nothing; the majority of three is the rate the etcd carries
// more often than not.
const Windows = 3

// MaxRechecks bounds the rechecks' runs in all: the runs of a rate that
// fell take the answer down to the highest pass below it, rechecked in
// turn, and a budget stops there.
const MaxRechecks = 4

// ProbeFactor places the probe step above the lowest failing rate.
const ProbeFactor = 2

// The phases of a sweep's steps.
const (
	PhaseLadder = "ladder" // the climb
	PhaseDown   = "down"   // the descent when the first step fails
	PhaseBisect = "bisect" // around the knee
	PhaseProbe  = "probe"  // above the knee: evidence of the bend only
	// PhaseConfirm repeats a ladder step that failed: a real limit fails
	// again, a passing stall (another writer, a hiccup of the machine)
	// does not, and the climb goes on. The repeated step becomes
	// PhaseRetried: kept as evidence, not counted.
	PhaseConfirm = "confirm"
	PhaseRetried = "retried"
	// PhaseUp is a rung above a first step that failed, tried before the
	// descent; PhaseLow marks that first step (and its confirmation)
	// once a rung above it passed: a failure at a low rate only, kept as
	// evidence, not counted (LowNote says why).
	PhaseUp  = "up"
	PhaseLow = "low"
	// PhaseRecheck runs the answer's step again for longer
	// (Config.Recheck); PhaseRechecked marks the runs the vote at its
	// rate overruled (the passes of a rate that fell, the failure of one
	// that stood): kept as evidence, not counted.
	PhaseRecheck   = "recheck"
	PhaseRechecked = "rechecked"
)

// UpRungs is how many rungs above a failing first step the ladder tries
// before it descends. On a machine whose CPUs neighbours keep busy, a
// real etcd's WAL fsync p99 is worse at low rates than at higher ones:
// its threads sleep between the syncs of a light load and wait for a CPU
// each time they wake, while a heavier load keeps them running and
// batches entries into each sync. Under twice as many spinning processes
// as CPUs, etcd 3.4 failed 100 puts/s (WAL p99 13.9 ms) and passed 1,233
// (7.4 ms) (bench/capacity-vs-etcd, busy storages): a ladder that only
// descended from a failing start would answer tens of puts/s for a
// machine that carries a thousand.
const UpRungs = 2

// Counted reports whether a step counts towards the answer and the
// bend: not a probe, not a failure that passed when repeated.
func Counted(s result.CapacityStep) bool {
	return s.Phase != PhaseProbe && !Overruled(s)
}

// Overruled reports whether a step's failure was overruled by a later
// step: it passed when repeated (PhaseRetried), or it was a low rate's
// failure under a higher rate that passed (PhaseLow). Neither bends the
// curve.
func Overruled(s result.CapacityStep) bool {
	return s.Phase == PhaseRetried || s.Phase == PhaseLow || s.Phase == PhaseRechecked
}

// ErrConfig is wrapped by every error about a sweep's configuration.
var ErrConfig = errors.New("bad capacity sweep")

// Validate checks a configuration.
func (c Config) Validate() error {
	switch {
	case !(c.Factor > 1):
		return fmt.Errorf("%w: factor %v must be above 1", ErrConfig, c.Factor)
	case !(c.Min > 0 && c.Min <= c.Start && c.Start <= c.Max):
		return fmt.Errorf("%w: want 0 < min %v <= start %v <= max %v", ErrConfig, c.Min, c.Start, c.Max)
	case !(c.Resolution > 0):
		return fmt.Errorf("%w: resolution %v must be positive", ErrConfig, c.Resolution)
	case !(c.Confidence > 0 && c.Confidence < 1):
		return fmt.Errorf("%w: confidence %v must be between 0 and 1", ErrConfig, c.Confidence)
	}
	return nil
}

// MaxSteps is the most steps the sweep can take: the longer side of the
// ladder (up to Max or down to Min) and the bisection.
func (c Config) MaxSteps() int {
	up := math.Ceil(math.Log(c.Max/c.Start)/math.Log(c.Factor)) + 1 // the last rung is Max
	down := math.Floor(math.Log(c.Start/c.Min)/math.Log(c.Factor)) + 1
	bisect := math.Ceil(math.Log2(math.Log(c.Factor) / math.Log1p(c.Resolution)))
	// The ladder step that fails is repeated once (PhaseConfirm); one
	// that passes when repeated lets the climb go on, so each rung may be.
	// A failing first step adds the rungs tried above it (PhaseUp).
	return int(2*math.Max(up, down)+math.Max(bisect, 0)) + 1 + UpRungs
}

// StepConfidence is the level each step is judged at, so that all the
// steps together keep Confidence.
func (c Config) StepConfidence() float64 {
	return 1 - (1-c.Confidence)/float64(c.MaxSteps())
}

// StepFunc measures one offered rate, judging its verdicts at
// confidence. A cancelled ctx returns the partial step (if any) and
// ctx's error.
type StepFunc func(ctx context.Context, rate, confidence float64) (result.CapacityStep, error)

// Passed reports whether a step met every limit and was decided: a WARN
// whose p99 was shown under the limit (close to it) counts as carried;
// a step whose verdict was not decided does not (it is no evidence that
// the rate is carried).
func Passed(s result.CapacityStep) bool { return s.Status != verdict.Fail && s.Decided }

// Failed reports whether a step failed a limit (an undecided step did
// not): what bends the curve is read from the steps that failed.
func Failed(s result.CapacityStep) bool { return s.Status == verdict.Fail }

// Undecided reports whether a step failed no limit but its verdict was
// not decided: it is not a carried rate (Passed is false), nor a failure
// the ladder turns on.
func Undecided(s result.CapacityStep) bool { return s.Status != verdict.Fail && !s.Decided }

// Sweep runs the sweep and returns its answer. An error (or a
// cancelled ctx) ends it: the steps done so far are returned, marked
// Interrupted, with the error.
func Sweep(ctx context.Context, cfg Config, step StepFunc) (*result.Capacity, error) {
	c, _, err := SweepWith(ctx, cfg, func(ctx context.Context, rate, confidence float64) (result.CapacityStep, struct{}, error) {
		s, err := step(ctx, rate, confidence)
		return s, struct{}{}, err
	})
	return c, err
}

// EvidenceStepFunc is a StepFunc that also returns the step's evidence
// in memory, typed: what its engine measured beside the step's figures.
type EvidenceStepFunc[E any] func(ctx context.Context, rate, confidence float64) (result.CapacityStep, E, error)

// SweepWith is Sweep for a step function that returns typed evidence
// with each step; the evidence comes back in the order of the answer's
// Steps, one for each.
func SweepWith[E any](ctx context.Context, cfg Config, step EvidenceStepFunc[E]) (*result.Capacity, []E, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	var evidence []E
	c := &result.Capacity{
		Unit: cfg.Unit, Criterion: cfg.Criterion, Confidence: cfg.Confidence,
		StepConfidence: cfg.StepConfidence(), Steps: []result.CapacityStep{},
	}
	lo, hi := -1, -1 // indices of the highest passing and lowest failing steps
	at := func(i int) *result.CapacityStep {
		if i < 0 {
			return nil
		}
		return &c.Steps[i]
	}
	try := func(rate float64, phase string) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if cfg.OnStep != nil {
			cfg.OnStep(len(c.Steps), rate, phase)
		}
		s, e, err := step(ctx, rate, c.StepConfidence)
		s.Rate, s.Phase = rate, phase
		if err != nil {
			if s.DurationNs > 0 {
				c.Steps, evidence = append(c.Steps, s), append(evidence, e)
			}
			return false, err
		}
		c.Steps, evidence = append(c.Steps, s), append(evidence, e)
		switch {
		case phase == PhaseProbe: // evidence of the bend, not of the capacity
		case Passed(s):
			lo = len(c.Steps) - 1
		case Undecided(s) && phase == PhaseLadder:
			// No evidence either way (too few syncs for a p99 at the
			// step's confidence, or a p99 too close to the limit): the
			// rate is not carried, and the climb goes on to a rate
			// that decides.
			return true, nil
		case hi < 0 || s.Rate <= c.Steps[hi].Rate:
			// The lowest failing rate bounds the answer: a rung above a
			// failing first step that failed too does not.
			hi = len(c.Steps) - 1
		}
		return Passed(s), nil
	}
	// overrule marks the failures below rate, a higher rung that passed,
	// as a low rate's (PhaseLow): they no longer bound the answer.
	// A failure at or above rate (a seeded Start's, when the climb
	// started again from From) still bounds the answer.
	overrule := func(rate float64) {
		hi = -1
		for i := range c.Steps {
			s := &c.Steps[i]
			if !Failed(*s) || s.Phase == PhaseProbe || s.Phase == PhaseRetried || s.Phase == PhaseLow {
				continue
			}
			if s.Rate < rate {
				s.Phase = PhaseLow
				continue
			}
			if hi < 0 || s.Rate <= c.Steps[hi].Rate {
				hi = i
			}
		}
	}
	// A failing ladder step is repeated once before the climb turns on
	// it: one stall must not set the answer many times too low. The
	// descent's and the bisection's steps are not repeated: a stall there
	// costs at most one rung, and on a slow storage every descending step
	// fails. A held step that failed (HeldFromNs) is not repeated either:
	// it ran long enough for its p99 not to be one stall.
	climbTry := func(rate float64, phase string) (bool, error) {
		prevHi := hi
		ok, err := try(rate, phase)
		if ok || err != nil || phase != PhaseLadder || c.Steps[len(c.Steps)-1].HeldFromNs > 0 {
			return ok, err // a held step's failure is not one stall
		}
		failed := len(c.Steps) - 1
		if ok, err = try(rate, PhaseConfirm); err != nil {
			return false, err
		}
		if ok {
			c.Steps[failed].Phase = PhaseRetried
			hi = prevHi
		}
		return ok, nil
	}
	err := climb(cfg, climbTry, overrule)
	if err == nil {
		err = bisect(cfg, try, func() (float64, float64) { return rateOf(at(lo)), rateOf(at(hi)) })
	}
	// A rate that fell leaves the answer a rung or more below its upper
	// bound: the gap is bisected again once when the runs left allow a
	// vote on the new answer (a short pass not voted on is not one to
	// bisect towards), and that answer voted on.
	runs := 0
	for again := true; err == nil; again = false {
		var fell bool
		if fell, err = recheck(cfg, c, try, &lo, &hi, &runs); err != nil || !fell || !again || runs+Windows-1 > MaxRechecks {
			break
		}
		err = bisect(cfg, try, func() (float64, float64) { return rateOf(at(lo)), rateOf(at(hi)) })
	}
	if err == nil && hi >= 0 && !cfg.NoProbe {
		// One step well above the knee tells a rate cap (syncs per second
		// stay flat) from queueing (sync time keeps growing). It fails
		// fast, and does not move the answer whatever it finds.
		if r := roundRate(c.Steps[hi].Rate * ProbeFactor); r <= cfg.Max {
			_, err = try(r, PhaseProbe)
		}
	}
	finish(c, cfg, at(lo), at(hi))
	if err != nil {
		c.Interrupted = true
	}
	return c, evidence, err
}

// recheck judges the answer's step (lo) on a majority of Windows runs
// at its rate when cfg.Recheck asks: it stands at two passes, the step
// itself among them, and falls at two failures; a fallen rate takes the
// answer down to the highest counted pass below it, itself rechecked in
// turn, with no new bisection. The runs the vote overruled - the passes
// of a fallen rate, the failure of one that stood - are marked
// PhaseRechecked: kept as evidence, not counted. A rate is rechecked
// only while MaxRechecks (runs counts them) leaves room for its whole
// vote. fell says the last rate voted on fell.
func recheck(cfg Config, c *result.Capacity, try func(float64, string) (bool, error), lo, hi *int, runs *int) (fell bool, err error) {
	for *runs+Windows-1 <= MaxRechecks && *lo >= 0 && c.Steps[*lo].Phase != PhaseRecheck && cfg.Recheck != nil && cfg.Recheck(c.Steps[*lo]) {
		first, rate, prevHi := *lo, c.Steps[*lo].Rate, *hi
		window := []int{first}
		passes, fails := 1, 0
		for passes < majority && fails < majority {
			*runs++
			ok, err := try(rate, PhaseRecheck)
			if err != nil {
				return false, err
			}
			window = append(window, len(c.Steps)-1)
			if ok {
				passes++
			} else {
				fails++
			}
		}
		stood := passes >= majority
		for _, i := range window {
			if Passed(c.Steps[i]) != stood {
				c.Steps[i].Phase = PhaseRechecked
			}
		}
		if stood {
			*hi = prevHi // a failed window of a rate that stood does not bound it
			return false, nil
		}
		fell = true
		*lo = -1
		for i, st := range c.Steps {
			if Passed(st) && Counted(st) && st.Rate < rate && (*lo < 0 || st.Rate > c.Steps[*lo].Rate) {
				*lo = i
			}
		}
	}
	return fell, nil
}

// majority is how many of a rechecked rate's Windows decide it.
const majority = (Windows + 1) / 2

func rateOf(s *result.CapacityStep) float64 {
	if s == nil {
		return 0
	}
	return s.Rate
}

// climb walks the ladder up from Start until a step fails. When Start
// already fails, it tries up to UpRungs rungs above it first: one that
// passes overrules the failures below it (overrule) and the climb goes
// on from there; when none passes, it walks down from Start until a step
// passes.
//
// A failing Start above From (Config.From) is left for a climb from From
// instead, up to the rung below Start.
func climb(cfg Config, try func(float64, string) (bool, error), overrule func(rate float64)) error {
	r := cfg.Start
	ok, err := try(r, PhaseLadder)
	if err != nil {
		return err
	}
	if !ok && cfg.From > 0 && cfg.From < cfg.Start {
		light := cfg
		light.Start, light.From = cfg.From, 0
		light.Min = min(cfg.Min, cfg.From)
		light.Max = max(cfg.From, roundRate(cfg.Start/cfg.Factor))
		return climb(light, try, overrule)
	}
	for i := 0; !ok && i < UpRungs; i++ {
		next := min(roundRate(r*cfg.Factor), cfg.Max)
		if next <= r {
			break
		}
		r = next
		if ok, err = try(r, PhaseUp); err != nil {
			return err
		}
		if ok {
			overrule(r)
		}
	}
	if !ok {
		r = cfg.Start
	}
	for ok {
		// The last rung is Max itself: a ladder whose next rung lies
		// beyond it would otherwise stop short of the rate it was asked
		// to reach (the CPU side's ladder, bounded by the disk's limit,
		// stopped at 1,200 below a disk limit of 1,600-1,900).
		next := roundRate(r * cfg.Factor)
		if next > cfg.Max {
			next = cfg.Max
		}
		if next <= r {
			return nil
		}
		r = next
		if ok, err = try(r, PhaseLadder); err != nil {
			return err
		}
	}
	if r != cfg.Start {
		return nil // failed on the way up
	}
	for !ok {
		// roundRate may keep a low rate where it is (1/2 rounds to 1).
		next := roundRate(r / cfg.Factor)
		if next < cfg.Min || next >= r {
			return nil
		}
		r = next
		if ok, err = try(r, PhaseDown); err != nil {
			return err
		}
	}
	return nil
}

// bisect narrows the gap between the highest passing and the lowest
// failing rate, splitting it geometrically, until Resolution.
func bisect(cfg Config, try func(float64, string) (bool, error), bounds func() (lo, hi float64)) error {
	for {
		lo, hi := bounds()
		if lo == 0 || hi == 0 || hi <= lo*(1+cfg.Resolution) {
			return nil
		}
		mid := roundRate(math.Sqrt(lo * hi))
		if mid <= lo || mid >= hi {
			return nil
		}
		if _, err := try(mid, PhaseBisect); err != nil {
			return err
		}
	}
}

// roundRate keeps rates readable: whole numbers, three significant
// digits above 1000.
func roundRate(r float64) float64 {
	if r < 1000 {
		return math.Round(r)
	}
	scale := math.Pow(10, math.Floor(math.Log10(r))-2)
	return math.Round(r/scale) * scale
}

// finish fills in the answer from the bounding steps.
func finish(c *result.Capacity, cfg Config, lo, hi *result.CapacityStep) {
	c.Rate, c.Upper = rateOf(lo), rateOf(hi)
	c.Decided = (lo == nil || lo.Decided) && (hi == nil || hi.Decided)
	if hi != nil {
		c.FailedRule = hi.Failed
	}
	for _, m := range cfg.Marks {
		m.Carried = c.Rate >= m.Rate
		c.Marks = append(c.Marks, m)
	}
	for _, m := range cfg.Sizes {
		m.Carried = c.Rate >= m.Rate
		c.Sizes = append(c.Sizes, m)
	}
	b := Bend(c.Steps, cfg.LimitNs)
	c.Bend, c.Evidence = b.Kind, BendWords(b)+RetriedNote(c)+LowNote(c)+UndecidedNote(c, cfg.LimitNs)+RecheckNote(c)
}

// RecheckNote says how the rechecked rates (Config.Recheck) fared on
// their vote of Windows runs, to end an evidence with, or "".
func RecheckNote(c *result.Capacity) string {
	type vote struct {
		rate          float64
		passes, fails int
		long          time.Duration
	}
	var votes []vote // in the order the rates were rechecked
	for _, s := range c.Steps {
		if s.Phase == PhaseRecheck && !slices.ContainsFunc(votes, func(v vote) bool { return v.rate == s.Rate }) {
			votes = append(votes, vote{rate: s.Rate})
		}
	}
	for _, s := range c.Steps {
		i := slices.IndexFunc(votes, func(v vote) bool { return v.rate == s.Rate })
		if i < 0 || s.Phase != PhaseRecheck && s.Phase != PhaseRechecked {
			continue
		}
		if s.Phase == PhaseRecheck {
			votes[i].long = max(votes[i].long, time.Duration(s.DurationNs).Round(time.Second))
		}
		if Passed(s) {
			votes[i].passes++
		} else {
			votes[i].fails++
		}
	}
	var words []string
	for _, v := range votes {
		// The rechecked step itself is a run of the vote whatever its
		// phase: a rate that stood keeps it counted.
		if v.rate == c.Rate && slices.ContainsFunc(c.Steps, func(s result.CapacityStep) bool {
			return s.Rate == v.rate && Passed(s) && Counted(s) && s.Phase != PhaseRecheck
		}) {
			v.passes++
		}
		what := "not carried"
		if v.passes >= majority {
			what = "the answer"
		}
		words = append(words, fmt.Sprintf("%.0f %s passed %d of %d runs (%s)", v.rate, c.Unit, v.passes, v.passes+v.fails, what))
	}
	if len(words) == 0 {
		return ""
	}
	below := ""
	if last := votes[len(votes)-1]; last.passes < majority {
		below = ": the answer is the highest rate below that passed"
	}
	return fmt.Sprintf("; the answer's step passed near a limit, one draw of a tail, and was run again over %v, judged on the majority of %d runs: %s%s",
		votes[0].long, Windows, strings.Join(words, "; "), below)
}

// LowNote says which low rates failed under a higher rate that passed
// (PhaseLow), to end an evidence with, or "".
func LowNote(c *result.Capacity) string {
	var rates []string
	var p99 []int64
	up := 0.0
	for _, s := range c.Steps {
		switch {
		case s.Phase == PhaseLow:
			if r := fmt.Sprintf("%.0f", s.Rate); !slices.Contains(rates, r) {
				rates = append(rates, r)
			}
			p99 = append(p99, s.SyncP99Ns)
		case s.Phase == PhaseUp && Passed(s) && (up == 0 || s.Rate < up):
			up = s.Rate
		}
	}
	if len(rates) == 0 {
		return ""
	}
	return fmt.Sprintf("; the first step, at %s %s, failed (fdatasync p99 %v) and %.0f %s above it passed: a light load's threads sleep between syncs and wait for a CPU each time they wake, which on a machine whose CPUs other processes keep busy sets a p99 at low rates that a heavier load does not see; it is not the limit of the rate, and is not counted",
		strings.Join(rates, ", "), c.Unit, time.Duration(slices.Max(p99)).Round(10*time.Microsecond), up, c.Unit)
}

// Discount lowers a finished sweep's answer to rate, a passing step's
// (0: none), when the passes above it do not hold (why, in words, ends
// the evidence): its upper bound becomes the lowest counted step above
// rate, and the marks and sizes are judged again.
func Discount(c *result.Capacity, rate float64, why string) {
	if rate >= c.Rate {
		return
	}
	up := c.Upper
	for _, s := range c.Steps {
		if Counted(s) && s.Rate > rate && (up == 0 || s.Rate < up) {
			up = s.Rate
		}
	}
	c.Rate, c.Upper = rate, up
	for i := range c.Marks {
		c.Marks[i].Carried = c.Rate >= c.Marks[i].Rate
	}
	for i := range c.Sizes {
		c.Sizes[i].Carried = c.Rate >= c.Sizes[i].Rate
	}
	c.Evidence += "; " + why
}

// RetriedNote says which steps failed once and passed when repeated, to
// end an evidence with, or "".
func RetriedNote(c *result.Capacity) string {
	var retried []string
	for _, s := range c.Steps {
		if s.Phase == PhaseRetried {
			retried = append(retried, fmt.Sprintf("%.0f", s.Rate))
		}
	}
	if len(retried) == 0 {
		return ""
	}
	return fmt.Sprintf("; the step at %s %s failed once and passed when repeated: a passing stall, not counted", strings.Join(retried, ", "), c.Unit)
}

// nearLimit: an undecided step whose p99 is at least this share of the
// limit was held back by the limit's nearness, not by its few syncs.
const nearLimit = 0.8

// UndecidedNote says which steps between the answer and its upper bound
// were not decided, and their p99s, to end an evidence with, or "". When
// no step passed and one of them came within nearLimit of the limit, it
// says what that means: the storage's sync latency, not the rate, is at
// the limit. On a FUSE storage whose syncs each wait a log-normal delay
// (median 1.5 ms, p99 8 ms) the steps from 13 to 200/s were undecided
// with p99s of 6.7-9.8 ms, and a real etcd 3.4 bisected on it passed
// from 0 to 109 puts/s over 13 runs, the same seed of the delays giving
// 109 once and nothing the next time (bench/capacity-vs-etcd): only a
// sweep that says the latency is at the limit answers that.
func UndecidedNote(c *result.Capacity, limitNs int64) string {
	var rates []string
	var lo, hi int64
	for _, s := range c.Steps {
		if s.Phase == PhaseProbe || !Undecided(s) || s.Rate <= c.Rate || (c.Upper > 0 && s.Rate >= c.Upper) {
			continue
		}
		rates = append(rates, fmt.Sprintf("%.0f", s.Rate))
		if lo == 0 || s.SyncP99Ns < lo {
			lo = s.SyncP99Ns
		}
		hi = max(hi, s.SyncP99Ns)
	}
	if len(rates) == 0 || limitNs <= 0 {
		return ""
	}
	dur := func(ns int64) time.Duration { return time.Duration(ns).Round(10 * time.Microsecond) }
	p99 := dur(lo).String()
	if hi > lo {
		p99 += "-" + dur(hi).String()
	}
	w := fmt.Sprintf("; not decided at %s %s: the fdatasync p99 (%s) too close to the %v limit, or over too few syncs, to tell at the step's confidence, so not carried",
		strings.Join(rates, ", "), c.Unit, p99, time.Duration(limitNs))
	if c.Rate == 0 && float64(hi) >= nearLimit*float64(limitNs) {
		w += "; with no step carried, this storage's sync latency itself sits at the limit, whatever the rate: it needs a lower latency tail, not more IOPS"
	}
	return w
}
