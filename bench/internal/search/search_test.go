package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestSearch(t *testing.T) {
	s := Search{Start: 100, Factor: 2, Resolution: 1.1, Min: 10, Max: 100_000}
	// A storage whose etcd passes up to 730 puts/s.
	var ts []Trial
	for r := s.Next(nil); r > 0; r = s.Next(ts) {
		if len(ts) > 30 {
			t.Fatalf("no end: %v", ts)
		}
		ts = append(ts, Trial{Rate: r, Pass: r <= 730})
	}
	lo, hi := Bounds(ts)
	if lo > 730 || hi <= 730 || hi/lo > 1.1 {
		t.Errorf("bounds %g..%g after %v, want around 730 within 10%%", lo, hi, ts)
	}
	if ts[0].Rate != 100 || ts[1].Rate != 200 {
		t.Errorf("ladder %v, want 100, 200, ...", ts)
	}
	// Nothing passes: the ladder goes down to Min and gives up.
	ts = nil
	for r := s.Next(nil); r > 0; r = s.Next(ts) {
		ts = append(ts, Trial{Rate: r, Pass: false})
	}
	if lo, _ := Bounds(ts); lo != 0 || ts[len(ts)-1].Rate < 10 {
		t.Errorf("nothing passing: %v", ts)
	}
	// A pass above a failure (noise) does not move the bounds.
	if lo, hi := Bounds([]Trial{{Rate: 100, Pass: true}, {Rate: 200}, {Rate: 400, Pass: true}}); lo != 100 || hi != 200 {
		t.Errorf("bounds %g..%g, want 100..200", lo, hi)
	}
	// A busy machine: the low rates fail, 200-1,500 pass. The rungs above
	// the failing start find the passes, and the low failures do not
	// bound them.
	ts = nil
	for r := s.Next(nil); r > 0; r = s.Next(ts) {
		if len(ts) > 30 {
			t.Fatalf("no end: %v", ts)
		}
		ts = append(ts, Trial{Rate: r, Pass: r >= 200 && r <= 1500})
	}
	if lo, hi := Bounds(ts); lo > 1500 || hi <= 1500 || hi/lo > 1.1 || ts[1].Rate != 200 {
		t.Errorf("busy: bounds %g..%g after %v, want around 1500 within 10%%", lo, hi, ts)
	}
	// Confirm (--paired): a stall at 400 fails once and passes when
	// repeated, and the climb goes on; the limit at 1,000 fails twice;
	// bisection steps are not repeated.
	c := s
	c.Confirm = true
	stalled := false
	ts = nil
	for r := c.Next(nil); r > 0; r = c.Next(ts) {
		if len(ts) > 30 {
			t.Fatalf("no end: %v", ts)
		}
		pass := r <= 1000
		if r == 400 && !stalled {
			pass, stalled = false, true
		}
		ts = append(ts, Trial{Rate: r, Pass: pass})
	}
	if lo, hi := Bounds(ts); lo > 1000 || hi <= 1000 || hi/lo > 1.1 {
		t.Errorf("confirm: bounds %g..%g after %v, want around 1000", lo, hi, ts)
	}
	if want := []Trial{{Rate: 100, Pass: true}, {Rate: 200, Pass: true}, {Rate: 400}, {Rate: 400, Pass: true}, {Rate: 800, Pass: true}, {Rate: 1600}, {Rate: 1600}}; !slices.Equal(ts[:7], want) {
		t.Errorf("confirm: trials %v, want %v first", ts, want)
	}
	// A cap under the start: two rungs up fail, then the descent.
	ts = nil
	for r := s.Next(nil); r > 0; r = s.Next(ts) {
		ts = append(ts, Trial{Rate: r, Pass: r <= 60})
	}
	if lo, hi := Bounds(ts); lo > 60 || hi <= 60 || ts[1].Rate != 200 || ts[2].Rate != 400 || ts[3].Rate != 50 {
		t.Errorf("cap at 60: bounds %g..%g after %v", lo, hi, ts)
	}
}

// Vote: the answer, passed at its limit, is judged on the majority of
// capsweep.Windows runs: a coin flip that passes one run in three falls
// and the pass below it is voted on in turn; one that passes two stands.
func TestSearchVote(t *testing.T) {
	s := Search{Start: 100, Factor: 2, Resolution: 1.1, Min: 10, Max: 100_000, Vote: true}
	for _, tc := range []struct {
		name string
		// pass says whether the n-th run (from 0) at rate passes
		pass     func(rate float64, n int) bool
		wantVote int
	}{
		{"a clean knee: the answer passes twice", func(r float64, _ int) bool { return r <= 730 }, 1},
		{"a coin flip at every passing rate that passes only its first run", func(r float64, n int) bool { return r <= 730 && n == 0 }, 4},
		{"the answer stands on two of three", func(r float64, n int) bool { return r <= 730 && n != 1 }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := drive(t, s, func(r float64, n int) (bool, bool) { p := tc.pass(r, n); return p, p })
			votes := 0
			for _, tr := range ts {
				if tr.Vote {
					votes++
				}
			}
			if votes != tc.wantVote {
				t.Errorf("%d vote runs, want %d: %v", votes, tc.wantVote, ts)
			}
			lo, hi := Bounds(ts)
			switch tc.wantVote {
			case 4: // two rates fell: the answer is the pass below both
				if lo >= 700 || hi > 730 {
					t.Errorf("bounds %g..%g after %v, want below the two fallen rates", lo, hi, ts)
				}
			default:
				if lo > 730 || hi <= 730 || hi/lo > 1.1 {
					t.Errorf("bounds %g..%g after %v, want around 730", lo, hi, ts)
				}
			}
		})
	}
}

// Vote, as etcdbench's side: a rate that fell with the pass below it not
// at its limit has the gap bisected again once (runs that are not votes),
// and the new answer voted on.
func TestSearchVoteBisectsAgain(t *testing.T) {
	s := Search{Start: 100, Factor: 2, Resolution: 1.1, Min: 10, Max: 100_000, Vote: true}
	// Up to 730 passes; above 650 only a rate's first run does, and only
	// those are at the limit.
	ts := drive(t, s, func(r float64, n int) (bool, bool) {
		pass := r <= 730 && (r <= 650 || n == 0)
		return pass, pass && r > 650
	})
	first := slices.IndexFunc(ts, func(t Trial) bool { return t.Vote })
	if first < 0 || !slices.ContainsFunc(ts[first:], func(t Trial) bool { return !t.Vote }) {
		t.Fatalf("no bisection after the fall: %v", ts)
	}
	if lo, hi := Bounds(ts); lo > 650 || hi <= lo {
		t.Errorf("bounds %g..%g after %v: want the answer at most 650, under the rates that fell", lo, hi, ts)
	}
}

// drive runs s to its end with Run, each rate's n-th run (from 0)
// passing and at its limit as step says, and returns the trials.
func drive(t *testing.T, s Search, step func(rate float64, n int) (pass, atLimit bool)) []Trial {
	t.Helper()
	runs := map[float64]int{}
	calls := 0
	ts, err := s.Run(context.Background(), func(_ context.Context, r float64, vote bool) (bool, bool, error) {
		if calls++; calls > 40 {
			return false, false, fmt.Errorf("no end after %d runs", calls-1)
		}
		pass, at := step(r, runs[r])
		runs[r]++
		return pass, at, nil
	})
	if err != nil {
		t.Fatalf("%v: %v", err, ts)
	}
	return ts
}

// Run stops at the first error of a step and returns what it tried.
func TestRunError(t *testing.T) {
	s := Search{Start: 150, Factor: 2, Resolution: 1.1, Min: 10, Max: 100_000, Vote: true}
	boom := errors.New("benchmark failed")
	ts, err := s.Run(context.Background(), func(_ context.Context, r float64, _ bool) (bool, bool, error) {
		if r > 300 {
			return false, false, boom
		}
		return true, false, nil
	})
	if !errors.Is(err, boom) || len(ts) != 2 || ts[0].Rate != 150 || ts[1].Rate != 300 {
		t.Errorf("trials %v, error %v: want 150 and 300, then the error", ts, err)
	}
}
