package etcdside

import (
	"testing"
	"time"

	"etcdbench/internal/verdict"
)

// The sweep's criterion states verdict's limits in the words the reports
// have always used, and its limit is verdict's WAL fsync p99.
func TestSweepConfig(t *testing.T) {
	c := SweepConfig(150, 20000, DefaultFactor, DefaultResolution, 10*time.Second, verdict.Defaults(), "the members'", "")
	want := "etcdctl check perf's rules (no failed put, throughput > 90 % of the rate, slowest <= 0.5 s, stddev <= 0.1 s) and the members' WAL fsync p99 < 10 ms and backend commit p99 < 25 ms, over 10s per step"
	if c.Criterion != want {
		t.Errorf("criterion %q, want %q", c.Criterion, want)
	}
	if c.LimitNs != (10*time.Millisecond).Nanoseconds() || c.Min != 10 || c.Confidence != 0.95 || c.Unit != "puts/s" || len(c.Marks) == 0 || len(c.Sizes) == 0 {
		t.Errorf("config %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
	if c := SweepConfig(5, 100, 2, 0.15, 3*time.Second, verdict.Defaults(), "the member's own", ", on an embedded etcd on this storage"); c.Min != 5 {
		t.Errorf("start 5: min %v, want 5", c.Min)
	}
}
