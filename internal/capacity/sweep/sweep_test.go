package sweep

import (
	"context"
	"errors"
	"strings"
	"testing"

	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

func testConfig() Config {
	return Config{Start: 100, Factor: 2, Min: 10, Max: 100_000, Resolution: 0.1, Confidence: 0.95, Unit: "writes/s", LimitNs: 10e6,
		Marks: []result.CapacityMark{{Name: "s", Rate: 150}, {Name: "m", Rate: 1000}, {Name: "l", Rate: 8000}}}
}

// knee is a storage that carries exactly up to k.
func knee(k float64) StepFunc {
	return func(_ context.Context, rate, _ float64) (result.CapacityStep, error) {
		s := result.CapacityStep{Status: verdict.Pass, Decided: true, DurationNs: 1}
		if rate > k {
			s.Status, s.Failed = verdict.Fail, "WAL fdatasync p99"
		}
		return s, nil
	}
}

func TestSweepFindsTheKnee(t *testing.T) {
	for _, k := range []float64{15, 99, 100, 150, 1234, 7999, 20000} {
		cfg := testConfig()
		c, err := Sweep(context.Background(), cfg, knee(k))
		if err != nil {
			t.Fatal(err)
		}
		if c.Rate > k || c.Upper <= k || c.Upper > c.Rate*(1+cfg.Resolution)+1 {
			t.Errorf("knee %v: found %v..%v, want a pass at most %v and a fail above it within %.0f %%", k, c.Rate, c.Upper, k, 100*cfg.Resolution)
		}
		if len(c.Steps) > cfg.MaxSteps() {
			t.Errorf("knee %v: %d steps, more than the %d the confidence was shared among", k, len(c.Steps), cfg.MaxSteps())
		}
		for _, m := range c.Marks {
			if m.Carried != (m.Rate <= c.Rate) {
				t.Errorf("knee %v: mark %s carried=%v at capacity %v", k, m.Name, m.Carried, c.Rate)
			}
		}
		if c.FailedRule != "WAL fdatasync p99" || !c.Decided || c.Interrupted {
			t.Errorf("knee %v: failed rule %q decided %v interrupted %v", k, c.FailedRule, c.Decided, c.Interrupted)
		}
	}
}

// The probe above the knee is one step more, and NoProbe leaves it out
// without moving the answer.
func TestSweepNoProbe(t *testing.T) {
	cfg := testConfig()
	with, err := Sweep(context.Background(), cfg, knee(1234))
	if err != nil {
		t.Fatal(err)
	}
	cfg.NoProbe = true
	without, err := Sweep(context.Background(), cfg, knee(1234))
	if err != nil {
		t.Fatal(err)
	}
	probes := func(c *result.Capacity) int {
		n := 0
		for _, s := range c.Steps {
			if s.Phase == PhaseProbe {
				n++
			}
		}
		return n
	}
	if probes(with) != 1 || probes(without) != 0 || len(without.Steps) != len(with.Steps)-1 {
		t.Errorf("probes %d and %d over %d and %d steps: want one, then none", probes(with), probes(without), len(with.Steps), len(without.Steps))
	}
	if with.Rate != without.Rate || with.Upper != without.Upper {
		t.Errorf("answers %v-%v and %v-%v: the probe must not move it", with.Rate, with.Upper, without.Rate, without.Upper)
	}
}

func TestSweepBounds(t *testing.T) {
	cfg := testConfig()
	c, err := Sweep(context.Background(), cfg, knee(1e9))
	if err != nil || c.Upper != 0 || c.Rate != cfg.Max || c.Bend != finding.None {
		t.Fatalf("a storage that carries everything: rate %v upper %v bend %v %v, want %v carried", c.Rate, c.Upper, c.Bend, err, cfg.Max)
	}
	// A Max off the ladder is its last rung (the CPU side's ladder is
	// bounded by the disk's limit): 1200, then 1900, not 1200 alone.
	cfg.Start, cfg.Max = 1200, 1900
	c, err = Sweep(context.Background(), cfg, knee(1e9))
	if err != nil || c.Rate != 1900 || len(c.Steps) != 2 {
		t.Fatalf("Max 1900 from 1200: rate %v after %d steps %v, want 1900 after 2", c.Rate, len(c.Steps), err)
	}
	cfg = testConfig()
	c, err = Sweep(context.Background(), cfg, knee(1))
	if err != nil || c.Rate != 0 || c.Upper > 2*cfg.Min {
		t.Fatalf("a storage that carries nothing: rate %v upper %v %v", c.Rate, c.Upper, err)
	}
}

func TestSweepInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	step := func(ctx context.Context, rate, conf float64) (result.CapacityStep, error) {
		if n++; n == 3 {
			cancel()
			return result.CapacityStep{DurationNs: 5}, ctx.Err()
		}
		return knee(1e6)(ctx, rate, conf)
	}
	c, err := Sweep(ctx, testConfig(), step)
	if !errors.Is(err, context.Canceled) || c == nil || !c.Interrupted || len(c.Steps) != 3 || c.Rate != 200 {
		t.Fatalf("interrupted sweep: %v %+v", err, c)
	}
}

func TestConfig(t *testing.T) {
	cfg := testConfig()
	if sc := cfg.StepConfidence(); !(sc > cfg.Confidence && sc < 1) {
		t.Fatalf("step confidence %v with overall %v", sc, cfg.Confidence)
	}
	for name, mod := range map[string]func(*Config){
		"factor 1":        func(c *Config) { c.Factor = 1 },
		"start above max": func(c *Config) { c.Start = 1e6 },
		"min 0":           func(c *Config) { c.Min = 0 },
		"no resolution":   func(c *Config) { c.Resolution = 0 },
		"confidence 1":    func(c *Config) { c.Confidence = 1 },
	} {
		c := testConfig()
		mod(&c)
		if _, err := Sweep(context.Background(), c, knee(1)); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func step(rate, syncs float64, p50, p99 int64, bytes float64, pass bool) result.CapacityStep {
	s := result.CapacityStep{Rate: rate, SyncsPerSec: syncs, SyncP50Ns: p50, SyncP99Ns: p99, BytesPerSync: bytes, Status: verdict.Pass, Decided: true}
	if !pass {
		s.Status = verdict.Fail
	}
	return s
}

// backend sets a step's backend commit p99.
func backend(s result.CapacityStep, p99 int64) result.CapacityStep {
	s.BackendCommitP99Ns = p99
	return s
}

func TestBend(t *testing.T) {
	const ms = 1e6
	for _, tc := range []struct {
		name  string
		steps []result.CapacityStep
		want  finding.Kind
		facts map[string]float64 // some of the facts it must give
	}{
		{"none failed", []result.CapacityStep{step(100, 100, ms, 2*ms, 370, true)}, finding.None, nil},
		{"rate cap", []result.CapacityStep{
			step(50, 50, 0.2*ms, 0.5*ms, 370, true), step(100, 90, 11*ms, 12*ms, 410, false),
			step(75, 75, 0.2*ms, 0.5*ms, 370, true), step(200, 90, 11*ms, 11.5*ms, 820, false),
			step(84, 84, 0.06*ms, 11*ms, 370, false), // near the cap, jitter makes some syncs wait
		}, finding.RateCap, map[string]float64{"syncs_per_sec_min": 90, "syncs_per_sec_max": 90, "rate_first": 100, "rate_last": 200, "sync_p50_min": 11 * ms}},
		{"stalls, batching at a fast disk's serial sync rate", []result.CapacityStep{
			step(400, 390, 0.25*ms, 4*ms, 380, true), step(800, 620, 0.22*ms, 12*ms, 480, false),
			step(1600, 750, 0.23*ms, 11*ms, 790, false),
		}, finding.Stalls, map[string]float64{"rate": 800, "sync_p99": 12 * ms, "sync_p50": 0.22 * ms}},
		{"queueing", []result.CapacityStep{
			step(100, 100, 1*ms, 2*ms, 370, true), step(800, 200, 4*ms, 6*ms, 1480, true),
			step(1000, 100, 10*ms, 14*ms, 3700, false), step(2000, 10, 90*ms, 200*ms, 70000, false),
		}, finding.Queueing, map[string]float64{"base_sync_p50": ms, "sync_p50": 10 * ms, "bytes_per_sync": 3700}},
		{"stalls", []result.CapacityStep{
			step(100, 100, 0.5*ms, 2*ms, 370, true), step(200, 200, 0.5*ms, 30*ms, 370, false),
		}, finding.Stalls, map[string]float64{"rate": 200, "sync_p99": 30 * ms}},
		{"the backend's commits first", []result.CapacityStep{
			step(100, 100, 0.5*ms, 2*ms, 370, true), backend(step(200, 190, 0.6*ms, 3*ms, 380, false), 40*ms),
		}, finding.Disk, map[string]float64{"rate": 200, "backend_commit_p99": 40 * ms, "sync_p99": 3 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Bend(tc.steps, 10*ms)
			if got.Kind != tc.want || BendWords(got) == "" {
				t.Fatalf("Bend = %+v (%s), want %q", got, BendWords(got), tc.want)
			}
			for name, want := range tc.facts {
				if f, ok := got.Fact(name); !ok || f.Value != want {
					t.Errorf("fact %s = %+v (present %v), want %v", name, f, ok, want)
				}
			}
		})
	}
}

// A stall that fails one ladder step does not set the answer: the step is
// repeated, passes, is kept as evidence (retried, not counted), and the
// climb goes on to the true knee. A real limit fails again when repeated.
func TestSweepConfirmsAFailingLadderStep(t *testing.T) {
	cfg := testConfig()
	stalled := false
	k := knee(5000)
	stall := func(ctx context.Context, rate, conf float64) (result.CapacityStep, error) {
		if rate == 400 && !stalled {
			stalled = true
			return result.CapacityStep{Status: verdict.Fail, Decided: true, DurationNs: 1, Failed: "WAL fdatasync p99"}, nil
		}
		return k(ctx, rate, conf)
	}
	c, err := Sweep(context.Background(), cfg, stall)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate > 5000 || c.Upper <= 5000 || c.Rate < 5000/(1+cfg.Resolution) {
		t.Fatalf("with a stall at 400: found %v..%v, want the knee at 5000", c.Rate, c.Upper)
	}
	var phases []string
	for _, s := range c.Steps {
		if s.Rate == 400 {
			phases = append(phases, s.Phase)
		}
	}
	if len(phases) != 2 || phases[0] != PhaseRetried || phases[1] != PhaseConfirm {
		t.Fatalf("steps at 400: %v, want [retried confirm]", phases)
	}
	// The retried step is a fact of the steps (above); the evidence in
	// words ends with its note.
	if n := RetriedNote(c); n == "" || !strings.HasSuffix(c.Evidence, n) {
		t.Errorf("evidence %q does not end with the retried steps' note %q", c.Evidence, n)
	}
	if len(c.Steps) > cfg.MaxSteps() {
		t.Errorf("%d steps, more than the %d the confidence was shared among", len(c.Steps), cfg.MaxSteps())
	}

	c, err = Sweep(context.Background(), cfg, knee(1234))
	if err != nil {
		t.Fatal(err)
	}
	confirms := 0
	for _, s := range c.Steps {
		if s.Phase == PhaseConfirm {
			confirms++
			if Passed(s) || s.Rate != 1600 {
				t.Errorf("confirm step %+v: want a failure at 1600, the first rung above the knee", s)
			}
		}
		if s.Phase == PhaseRetried {
			t.Errorf("a real limit's step marked retried: %+v", s)
		}
	}
	if confirms != 1 || c.Rate > 1234 || c.Upper <= 1234 {
		t.Errorf("real limit at 1234: %d confirm steps, found %v..%v", confirms, c.Rate, c.Upper)
	}
}

// A held step that failed (etcd capacity's: it ran on towards a hundred
// observations) is not repeated: it is not one stall.
func TestSweepDoesNotConfirmAHeldFailure(t *testing.T) {
	k := knee(1234)
	held := func(ctx context.Context, rate, conf float64) (result.CapacityStep, error) {
		s, err := k(ctx, rate, conf)
		if !Passed(s) {
			s.HeldFromNs = 3e9
		}
		return s, err
	}
	c, err := Sweep(context.Background(), testConfig(), held)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Steps {
		if s.Phase == PhaseConfirm || s.Phase == PhaseRetried {
			t.Errorf("a held failure repeated: %+v", s)
		}
	}
	if c.Rate > 1234 || c.Upper <= 1234 || c.Rate < 1234/(1+testConfig().Resolution) {
		t.Errorf("real limit at 1234: found %v..%v", c.Rate, c.Upper)
	}
}

// An undecided step is not a carried rate: the answer is the highest
// decided pass, whatever undecided steps above it found (a WARN, an
// undecided step, is not counted as carried). Low undecided steps (too
// few syncs for a p99) let the climb go on; near the knee they count
// against it.
func TestSweepUndecidedIsNotCarried(t *testing.T) {
	const decidedFrom, k, nearFrom = 400.0, 5000.0, 3000.0
	step := func(_ context.Context, rate, _ float64) (result.CapacityStep, error) {
		s := result.CapacityStep{Status: verdict.Pass, Decided: true, DurationNs: 1}
		switch {
		case rate > k:
			s.Status, s.Failed = verdict.Fail, "WAL fdatasync p99"
		case rate < decidedFrom || rate >= nearFrom:
			s.Status, s.Decided = verdict.Warn, false
		}
		return s, nil
	}
	c, err := Sweep(context.Background(), testConfig(), step)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate >= nearFrom || c.Rate < decidedFrom || c.Upper <= c.Rate {
		t.Errorf("carries %v..%v; want the highest decided pass, from %v and under %v", c.Rate, c.Upper, decidedFrom, nearFrom)
	}
	for _, s := range c.Steps {
		if Passed(s) && !s.Decided {
			t.Errorf("undecided step at %v counted as passed", s.Rate)
		}
	}
}

// A descent ends at the lowest rate even where rounding keeps a low rate
// (1/2 rounds to 1): it used to try 1/s forever.
func TestSweepDescentEnds(t *testing.T) {
	cfg := testConfig()
	cfg.Start, cfg.Min = 2, 0.1
	c, err := Sweep(context.Background(), cfg, knee(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) > cfg.MaxSteps() || c.Rate != 0 {
		t.Errorf("%d steps, carries %v", len(c.Steps), c.Rate)
	}
}

// A storage whose sync latency sits at the limit whatever the rate: every
// step is undecided (its p99 within the step's confidence of the limit)
// until the rate fails on something else. The answer is 0, and the
// evidence says why: the undecided steps, their p99s, and that the
// latency, not the rate, is at the limit. Where a step passed, the
// undecided steps above it are named without that conclusion.
func TestUndecidedNote(t *testing.T) {
	const failFrom = 400.0
	atLimit := func(passBelow float64) StepFunc {
		return func(_ context.Context, rate, _ float64) (result.CapacityStep, error) {
			s := result.CapacityStep{Status: verdict.Warn, DurationNs: 1, SyncP99Ns: 9_700_000}
			switch {
			case rate >= failFrom:
				s.Status, s.Decided, s.Failed = verdict.Fail, true, "backend commit p99"
			case rate < passBelow:
				s.Status, s.Decided, s.SyncP99Ns = verdict.Pass, true, 2_000_000
			}
			return s, nil
		}
	}
	c, err := Sweep(context.Background(), testConfig(), atLimit(0))
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate != 0 || c.Upper != failFrom {
		t.Fatalf("carries %v..%v, want 0..%v", c.Rate, c.Upper, failFrom)
	}
	n := UndecidedNote(c, testConfig().LimitNs)
	for _, want := range []string{"not decided at 100, 200 writes/s", "9.7ms", "10ms limit", "sync latency itself sits at the limit"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if !strings.HasSuffix(c.Evidence, n) {
		t.Errorf("evidence %q does not end with the note", c.Evidence)
	}

	cfg := testConfig()
	cfg.Start = 50
	c, err = Sweep(context.Background(), cfg, atLimit(100))
	if err != nil {
		t.Fatal(err)
	}
	n = UndecidedNote(c, cfg.LimitNs)
	if c.Rate < 50 || c.Rate >= 100 || !strings.Contains(n, "not decided at 100 writes/s") || strings.Contains(n, "sync latency itself") {
		t.Errorf("carries %v, note %q: want 50-100, the step at 100 named (200 is above the bisection's upper bound), no latency conclusion", c.Rate, n)
	}
	if n := UndecidedNote(&result.Capacity{Rate: 100, Steps: []result.CapacityStep{{Rate: 100, Status: verdict.Pass, Decided: true}}}, 10e6); n != "" {
		t.Errorf("no undecided step: note %q, want none", n)
	}
}

// On a busy machine the low rates can fail where higher ones pass (a
// light load's threads wait for a CPU each time they wake): the ladder
// tries the rungs above a failing start before it descends, and a pass
// there overrules the low failures. A storage that fails every rate
// above its knee still descends to it.
func TestSweepTriesAboveAFailingStart(t *testing.T) {
	for _, tc := range []struct {
		name           string
		lowFails, knee float64 // rates below lowFails fail, and above knee
		wantLow        bool
	}{
		{"busy machine", 150, 2000, true},
		{"low failures two rungs up", 400, 2000, true},
		{"rate cap below the start", 0, 60, false},
		{"knee between the start and the first rung", 0, 150, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step := func(_ context.Context, rate, _ float64) (result.CapacityStep, error) {
				s := result.CapacityStep{Status: verdict.Pass, Decided: true, DurationNs: 1, SyncP99Ns: 5e6}
				if rate < tc.lowFails || rate > tc.knee {
					s.Status, s.Failed, s.SyncP99Ns = verdict.Fail, "WAL fdatasync p99", 13e6
				}
				return s, nil
			}
			cfg := testConfig()
			c, err := Sweep(context.Background(), cfg, step)
			if err != nil {
				t.Fatal(err)
			}
			if c.Rate > tc.knee || c.Upper <= tc.knee || c.Upper > c.Rate*(1+cfg.Resolution)+1 {
				t.Fatalf("found %v..%v, want the knee at %v; steps %+v", c.Rate, c.Upper, tc.knee, c.Steps)
			}
			lows := 0
			for _, s := range c.Steps {
				if s.Phase == PhaseLow {
					lows++
					if s.Rate >= tc.lowFails || Counted(s) {
						t.Errorf("step at %v marked low", s.Rate)
					}
				}
			}
			if (lows > 0) != tc.wantLow || (LowNote(c) != "") != tc.wantLow {
				t.Errorf("%d low steps, note %q", lows, LowNote(c))
			}
			if tc.wantLow && !strings.Contains(c.Evidence, LowNote(c)) {
				t.Errorf("evidence %q lacks the low steps' note", c.Evidence)
			}
			if len(c.Steps) > cfg.MaxSteps() {
				t.Errorf("%d steps, more than the %d the confidence was shared among", len(c.Steps), cfg.MaxSteps())
			}
		})
	}
}

// A seeded Start that fails (twice) is not descended from: the climb
// starts again from From, up to the rung below Start, and the seed's
// failure still bounds the answer; a seed that passes climbs as any
// start does. On a busy machine whose light loads fail too, the climb
// from From tries the rungs above it (never the seed's again) and the
// seed's failure still bounds what a rung above From carried.
func TestSweepSeededStartFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name           string
		lowFails, knee float64
		wantSeedFailed bool
	}{
		{"seed above the knee", 0, 1000, true},
		{"seed below the knee", 0, 5000, false},
		{"busy: light loads fail too", 150, 1000, true},
		{"busy: the light load fails", 200, 1000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rates []float64
			step := func(_ context.Context, rate, _ float64) (result.CapacityStep, error) {
				rates = append(rates, rate)
				s := result.CapacityStep{Status: verdict.Pass, Decided: true, DurationNs: 1, SyncP99Ns: 5e6}
				if rate < tc.lowFails || rate > tc.knee {
					s.Status, s.Failed, s.SyncP99Ns = verdict.Fail, "WAL fdatasync p99", 13e6
				}
				return s, nil
			}
			cfg := testConfig()
			cfg.Start, cfg.From, cfg.Min = 2400, 150, 10
			c, err := Sweep(context.Background(), cfg, step)
			if err != nil {
				t.Fatal(err)
			}
			if c.Rate > tc.knee || c.Upper <= tc.knee || c.Upper > c.Rate*(1+cfg.Resolution)+1 {
				t.Fatalf("found %v..%v, want the knee at %v; rates %v", c.Rate, c.Upper, tc.knee, rates)
			}
			seeds := 0
			for _, s := range c.Steps {
				if s.Phase == PhaseDown {
					t.Errorf("a descent (%v) from a seed: rates %v", s.Rate, rates)
				}
				if s.Rate == 2400 {
					seeds++
				}
				if s.Rate > 2400 && s.Phase != PhaseProbe && tc.wantSeedFailed {
					t.Errorf("a rung above the failing seed (%v, %s): rates %v", s.Rate, s.Phase, rates)
				}
			}
			if tc.wantSeedFailed && seeds != 2 {
				t.Errorf("the failing seed ran %d times, want twice (confirmed): rates %v", seeds, rates)
			}
		})
	}
}

// The answer's step is run again when Recheck asks and judged on the
// majority of Windows runs: a rate whose longer runs fail twice falls,
// taking the answer down to the highest pass below it (the passes of the
// fallen rate marked rechecked, not counted); one that passes twice
// stands, and a failed run among them does not bound it.
func TestSweepRechecksTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		longKnee float64 // the longer runs fail above this; short ones above 1,000
		flip     bool    // the longer runs alternate: fail, pass, fail, ...
	}{
		{"holds over the longer run", 1000, false},
		{"fails over the longer run", 500, false}, // 951 and 800 fall; 400 is below
		{"a coin flip stands on two of three", 1000, true},
		{"a fallen rate's gap bisected again", 900, false}, // the first answer falls; the new one stands
	} {
		t.Run(tc.name, func(t *testing.T) {
			var phase string
			longRuns := 0
			step := func(_ context.Context, rate, _ float64) (result.CapacityStep, error) {
				k := 1000.0
				if phase == PhaseRecheck {
					k = tc.longKnee
					if longRuns++; tc.flip && longRuns%2 == 1 {
						k = 0
					}
				}
				s := result.CapacityStep{Status: verdict.Pass, Decided: true, DurationNs: 1, SyncP99Ns: 5e6}
				if rate > k {
					s.Status, s.Failed = verdict.Fail, "WAL fdatasync p99"
				}
				return s, nil
			}
			cfg := testConfig()
			cfg.OnStep = func(_ int, _ float64, p string) { phase = p }
			rechecks := 0
			cfg.Recheck = func(result.CapacityStep) bool { rechecks++; return true }
			c, err := Sweep(context.Background(), cfg, step)
			if err != nil {
				t.Fatal(err)
			}
			if rechecks < 1 || longRuns > MaxRechecks {
				t.Fatalf("Recheck asked %d times, %d longer runs: want at least 1 and at most %d runs", rechecks, longRuns, MaxRechecks)
			}
			var overruled, long []result.CapacityStep
			for _, s := range c.Steps {
				switch s.Phase {
				case PhaseRecheck:
					long = append(long, s)
				case PhaseRechecked:
					overruled = append(overruled, s)
				}
			}
			if len(long) == 0 {
				t.Fatalf("no recheck step: %+v", c.Steps)
			}
			switch {
			case tc.flip:
				// fail, then pass: two passes of three, the failure overruled
				if len(long) != 1 || len(overruled) != 1 || Passed(overruled[0]) || c.Rate != long[0].Rate || c.Upper <= c.Rate {
					t.Errorf("a coin flip: answer %v..%v, rechecks %+v, overruled %+v", c.Rate, c.Upper, long, overruled)
				}
				if !strings.Contains(c.Evidence, "passed 2 of 3 runs (the answer)") {
					t.Errorf("evidence %q does not give the vote", c.Evidence)
				}
			case tc.longKnee == 900:
				if c.Rate > 900 || c.Rate < 800 || c.Upper <= c.Rate || !strings.Contains(c.Evidence, "(not carried)") || !strings.Contains(c.Evidence, "(the answer)") {
					t.Errorf("after a fall: answer %v..%v, evidence %q: want the gap bisected again to just under 900, voted on", c.Rate, c.Upper, c.Evidence)
				}
			case tc.longKnee >= 1000:
				if len(overruled) != 0 || c.Rate != long[0].Rate || c.Rate > 1000 || c.Upper <= 1000 {
					t.Errorf("a recheck that passed moved the answer: %v..%v, overruled %+v", c.Rate, c.Upper, overruled)
				}
				if !strings.Contains(c.Evidence, "passed 2 of 2 runs (the answer)") {
					t.Errorf("evidence %q does not give the vote", c.Evidence)
				}
			default:
				// The pass below a fallen rate is rechecked in turn, while
				// the runs allow a whole vote.
				if len(overruled) == 0 || Counted(overruled[0]) || c.Rate > tc.longKnee || c.Upper <= tc.longKnee {
					t.Errorf("a failed recheck: answer %v..%v, rechecks %+v, overruled %+v", c.Rate, c.Upper, long, overruled)
				}
				if !strings.Contains(c.Evidence, "passed 1 of 3 runs (not carried)") || !strings.Contains(c.Evidence, "highest rate below that passed") {
					t.Errorf("evidence %q does not say the rate fell", c.Evidence)
				}
			}
		})
	}
}
