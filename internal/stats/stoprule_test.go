package stats

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestDesignEffect(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	iid := make([]Batch, 60)
	for i := range iid {
		iid[i].N = 1000
		for range 1000 {
			if r.Float64() < 0.01 {
				iid[i].K++
			}
		}
	}
	if d := DesignEffect(iid); d > 1.6 {
		t.Errorf("independent samples gave design effect %.2f, want about 1", d)
	}
	// The same 1 % overall, but all in every fifth second.
	bursty := make([]Batch, 60)
	for i := range bursty {
		bursty[i].N = 1000
		if i%5 == 0 {
			bursty[i].K = 50
		}
	}
	if d := DesignEffect(bursty); d < 10 {
		t.Errorf("clustered exceedances gave design effect %.2f, want >> 1", d)
	}
	for _, c := range []struct {
		name string
		b    []Batch
	}{
		{"no batches", nil},
		{"one batch", []Batch{{N: 10, K: 3}}},
		{"no exceedances", []Batch{{N: 10}, {N: 10}}},
		{"all exceed", []Batch{{N: 10, K: 10}, {N: 5, K: 5}}},
	} {
		if d := DesignEffect(c.b); d != 1 {
			t.Errorf("%s: design effect %v, want 1", c.name, d)
		}
	}
}

func testRule() StopRule {
	return StopRule{
		Threshold: 10 * time.Millisecond, Quantile: 0.99, Confidence: 0.95,
		MinSamples: 1000, MinDuration: 10 * time.Second, MaxDuration: 60 * time.Second,
		Interval: time.Second,
	}
}

func TestStopRuleGuards(t *testing.T) {
	r := testRule()
	if r.Looks() != 51 {
		t.Fatalf("looks = %d, want 51", r.Looks())
	}
	if got := r.Decide(100000, 0, 1, 5*time.Second); got.Outcome != Undecided {
		t.Fatalf("decided before the minimum duration: %+v", got)
	}
	if got := r.Decide(999, 999, 1, 20*time.Second); got.Outcome != Undecided {
		t.Fatalf("decided below the minimum samples: %+v", got)
	}
	if got := r.Decide(10000, 0, 1, 10*time.Second); got.Outcome != Pass {
		t.Fatalf("10000 clean samples: %+v", got)
	}
	if got := r.Decide(10000, 1000, 1, 10*time.Second); got.Outcome != Fail {
		t.Fatalf("10 %% exceedances: %+v", got)
	}
	if got := r.Decide(10000, 100, 1, 10*time.Second); got.Outcome != Undecided {
		t.Fatalf("exactly 1 %% must not be decided: %+v", got)
	}
	// A large design effect turns a pass into "not yet".
	if got := r.Decide(2000, 5, 50, 10*time.Second); got.Outcome != Undecided {
		t.Fatalf("clustered evidence decided too early: %+v", got)
	}
	bad := r
	bad.Quantile = 1
	if bad.Validate() == nil {
		t.Fatal("quantile 1 accepted")
	}
}

// scenario simulates a disk second by second: ops per second and, for each
// second, the probability that an operation exceeds the threshold.
type scenario struct {
	name     string
	truth    Outcome
	opsPerS  int
	pAt      func(sec, phase int) float64
	trueRate float64 // long-run exceedance fraction, for the test's own check
}

func simulate(rule StopRule, s scenario, rnd *rand.Rand) Outcome {
	phase := rnd.IntN(30)
	series := make([]Batch, 0, 64)
	var n, k int64
	maxS := int(rule.MaxDuration / time.Second)
	for sec := 1; sec <= maxS; sec++ {
		p := s.pAt(sec, phase)
		b := Batch{N: int64(s.opsPerS)}
		for range s.opsPerS {
			if rnd.Float64() < p {
				b.K++
			}
		}
		series = append(series, b)
		n += b.N
		k += b.K
		d := rule.Decide(n, k, DesignEffect(series), time.Duration(sec)*time.Second)
		if d.Outcome != Undecided {
			return d.Outcome
		}
	}
	return Undecided
}

// TestStopRuleNeverWrongWhenClear runs the sequential rule on simulated disks
// whose true p99 is clearly on one side of the threshold, including disks
// whose slow operations all come in periodic stalls, and checks that it never
// reaches the wrong verdict.
func TestStopRuleNeverWrongWhenClear(t *testing.T) {
	every := func(period int, pStall, pQuiet float64) func(int, int) float64 {
		return func(sec, phase int) float64 {
			if (sec+phase)%period == 0 {
				return pStall
			}
			return pQuiet
		}
	}
	scenarios := []scenario{
		{"steady fast disk", Pass, 2000, every(1, 0.002, 0.002), 0.002},
		{"steady slow disk", Fail, 300, every(1, 0.04, 0.04), 0.04},
		{"hdd-like slow disk", Fail, 60, every(1, 0.2, 0.2), 0.2},
		{"fast disk with a stall every 5 s", Pass, 2000, every(5, 0.02, 0), 0.004},
		{"slow stalls every 5 s, quiet in between", Fail, 2000, every(5, 0.15, 0), 0.03},
		{"slow stalls every 7 s", Fail, 1000, every(7, 0.3, 0.001), 0.044},
	}
	const trials = 300
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(42, uint64(len(s.name))))
			var wrong, undecided int
			for range trials {
				switch got := simulate(testRule(), s, rnd); got {
				case s.truth:
				case Undecided:
					undecided++
				default:
					wrong++
				}
			}
			if wrong > 0 {
				t.Errorf("%d of %d runs reached the wrong verdict (true exceedance %.2f %%)", wrong, trials, 100*s.trueRate)
			}
			if undecided > trials/10 {
				t.Errorf("%d of %d runs stayed undecided on a clear case", undecided, trials)
			}
		})
	}
}

// SamplesToPass is the fewest samples without an exceedance that Decide
// passes, at the rule's per-look level.
func TestSamplesToPass(t *testing.T) {
	for _, r := range []StopRule{
		{Threshold: time.Millisecond, Quantile: 0.99, Confidence: 0.95, Interval: time.Second},
		{Threshold: time.Millisecond, Quantile: 0.99, Confidence: 0.998, MinDuration: 2 * time.Second, MaxDuration: 15 * time.Second, Interval: time.Second},
		{Threshold: time.Millisecond, Quantile: 0.999, Confidence: 0.9, Interval: time.Second},
	} {
		n := r.SamplesToPass()
		if d := r.Decide(n, 0, 1, r.MinDuration); d.Outcome != Pass {
			t.Errorf("%+v: %d samples, none over: %v (%s), want a pass", r, n, d.Outcome, d.Reason)
		}
		if d := r.Decide(n-1, 0, 1, r.MinDuration); d.Outcome == Pass {
			t.Errorf("%+v: %d samples passed, want SamplesToPass %d to be the fewest", r, n-1, n)
		}
	}
	r := StopRule{Threshold: time.Millisecond, Quantile: 0.99, Confidence: 0.95, MinSamples: 5000, Interval: time.Second}
	if n := r.SamplesToPass(); n != 5000 {
		t.Errorf("MinSamples 5000: SamplesToPass %d, want 5000", n)
	}
}

// SamplesToPassAt is the fewest samples, a share frac of them over the
// threshold, that Decide passes: SamplesToPass with none over, more as
// the share grows, none at the quantile's share.
func TestSamplesToPassAt(t *testing.T) {
	r := StopRule{Threshold: time.Millisecond, Quantile: 0.99, Confidence: 0.998, Interval: time.Second}
	if n := r.SamplesToPassAt(0); n != r.SamplesToPass() {
		t.Errorf("no share over: %d, want SamplesToPass %d", n, r.SamplesToPass())
	}
	prev := r.SamplesToPass()
	for _, frac := range []float64{0.001, 0.002, 0.005} {
		n := r.SamplesToPassAt(frac)
		if n <= prev {
			t.Errorf("share %v: %d samples, want more than the %d of a smaller share", frac, n, prev)
		}
		if k := int64(frac * float64(n)); r.Decide(n, k, 1, 0).Outcome != Pass {
			t.Errorf("share %v: %d samples with %d over do not pass", frac, n, k)
		}
		if UpperBound(frac*float64(n-1), float64(n-1), r.PerLookConfidence()) < 0.01 {
			t.Errorf("share %v: %d samples already pass, want %d to be the fewest", frac, n-1, n)
		}
		t.Logf("share %v: %d samples", frac, n)
		prev = n
	}
	for _, frac := range []float64{0.01, 0.02} {
		if n := r.SamplesToPassAt(frac); n != maxSamplesToPass {
			t.Errorf("share %v, at or over the quantile's: %d samples, want no pass (%d)", frac, n, maxSamplesToPass)
		}
	}
}
