// Package resulttest holds what tests of every workload engine check of
// a finished workload, written once.
package resulttest

import (
	"encoding/json"
	"testing"

	"etcdbench/internal/result"
)

// CheckWorkload verifies what must hold for every finished workload: it
// did something, its percentiles are ordered, its device and process
// figures are in range, and it encodes as JSON.
func CheckWorkload(t testing.TB, wl result.Workload) {
	t.Helper()
	if wl.Ops <= 0 || wl.DurationNs <= 0 {
		t.Errorf("%s: ops %d in %d ns", wl.Name, wl.Ops, wl.DurationNs)
	}
	for _, l := range wl.Latencies {
		prev := l.MinNs
		for _, p := range l.Percentiles {
			if p.ValueNs < prev {
				t.Errorf("%s/%s percentiles not ordered: %+v", wl.Name, l.Name, l.Percentiles)
			}
			prev = p.ValueNs
		}
	}
	if d := wl.Device; d != nil && (d.Utilization < 0 || d.Utilization > 1 || d.AvgQueue < 0) {
		t.Errorf("%s: device figures out of range: %+v", wl.Name, d)
	}
	if p := wl.Process; p == nil || p.UserNs < 0 || p.SystemNs < 0 {
		t.Errorf("%s: process figures %+v", wl.Name, p)
	}
	if _, err := json.Marshal(wl); err != nil {
		t.Errorf("%s: %v", wl.Name, err)
	}
}
