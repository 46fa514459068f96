package search

import (
	"strings"
	"testing"
	"time"
)

func TestFailures(t *testing.T) {
	ok := Step{Offered: 1000, Achieved: 995, WALP99: 3 * time.Millisecond, CommitP99: 12 * time.Millisecond}
	for _, tc := range []struct {
		name string
		mod  func(*Step)
		want string // "" passes
	}{
		{"within every limit", func(*Step) {}, ""},
		{"slow WAL", func(s *Step) { s.WALP99 = 10 * time.Millisecond }, "WAL fsync p99 10.0ms >= 10ms"},
		{"slow commit", func(s *Step) { s.CommitP99 = 30 * time.Millisecond }, "backend commit p99 30.0ms >= 25ms"},
		{"rate not reached", func(s *Step) { s.Achieved = 850 }, "achieved 850/s < 90% of 1000/s"},
		{"errors", func(s *Step) { s.Errors = 2 }, "2 errors"},
		{"broken", func(s *Step) { s.Broken = "no summary" }, "no summary"},
		{"no fsync observed", func(s *Step) { s.WALP99 = NoneObserved }, "none observed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.mod(&s)
			got := strings.Join(DefaultLimits.Failures(s), "; ")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("failures %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAtLimit(t *testing.T) {
	for _, tc := range []struct {
		wal, commit time.Duration
		want        bool
	}{
		{3 * time.Millisecond, 12 * time.Millisecond, false},
		{8 * time.Millisecond, 16 * time.Millisecond, false},
		{9 * time.Millisecond, 12 * time.Millisecond, true},
		{3 * time.Millisecond, 17 * time.Millisecond, true},
	} {
		if got := DefaultLimits.AtLimit(tc.wal, tc.commit); got != tc.want {
			t.Errorf("AtLimit(%v, %v) = %v, want %v", tc.wal, tc.commit, got, tc.want)
		}
	}
}
