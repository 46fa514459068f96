package exporter

import (
	"strings"
	"testing"
	"time"
)

func TestRecentSyncs(t *testing.T) {
	var none *recentSyncs
	if got := none.summary(time.Now()); got != "-" {
		t.Errorf("no recorder: %q, want -", got)
	}
	r := newRecentSyncs()
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	if got := r.summary(t0); !strings.HasPrefix(got, "no sync") {
		t.Errorf("nothing recorded: %q", got)
	}
	// First minute: 99 fast syncs and one slow, so far (the p99 within
	// the histogram's 1 %).
	for i := range 99 {
		r.observe(t0.Add(time.Duration(i)*100*time.Millisecond), 200*time.Microsecond)
	}
	r.observe(t0.Add(20*time.Second), 50*time.Millisecond)
	if got := r.summary(t0.Add(30 * time.Second)); !strings.HasPrefix(got, "20") || !strings.Contains(got, "µs (100 syncs, last 30s)") {
		t.Errorf("first minute: %q, want a p99 of 200µs over the 100 syncs so far", got)
	}
	// The next minute reports the whole minute before, whatever comes in.
	for i := range 10 {
		r.observe(t0.Add(61*time.Second+time.Duration(i)*time.Second), 5*time.Millisecond)
	}
	if got := r.summary(t0.Add(75 * time.Second)); !strings.Contains(got, "100 syncs, last minute") {
		t.Errorf("second minute: %q, want the first minute's 100 syncs", got)
	}
	// A minute later the 5 ms syncs are the last minute's.
	if got := r.summary(t0.Add(125 * time.Second)); !strings.HasPrefix(got, "5.0") || !strings.Contains(got, "ms (10 syncs, last minute)") {
		t.Errorf("third minute: %q, want the 10 syncs of 5ms", got)
	}
	// Quiet for more than two minutes: nothing of before remains.
	if got := r.summary(t0.Add(10 * time.Minute)); !strings.HasPrefix(got, "no sync") {
		t.Errorf("after a gap: %q, want no sync", got)
	}
}
