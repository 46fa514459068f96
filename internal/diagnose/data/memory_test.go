package data

import (
	"testing"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// The memory rule: a member over its limit when idle, one full LIST
// over it, fewer than four at once under it, four or more, an unknown
// limit.
func TestJudgeMemory(t *testing.T) {
	th := DefaultThresholds()
	for _, c := range []struct {
		name string
		m    *result.DataMemory
		want []verdict.Status
	}{
		{"idle over the limit", &result.DataMemory{LimitBytes: 1 << 30, IdleBytes: 2 << 30, ConcurrentFullLists: 0}, []verdict.Status{verdict.Fail}},
		{"one LIST over it", &result.DataMemory{LimitBytes: 1 << 30, IdleBytes: 512 << 20, FullListPeakBytes: 2 << 30, ConcurrentFullLists: 0}, []verdict.Status{verdict.Fail}},
		{"two fit", &result.DataMemory{LimitBytes: 4 << 30, IdleBytes: 512 << 20, ConcurrentFullLists: 2}, []verdict.Status{verdict.Warn}},
		{"four fit", &result.DataMemory{LimitBytes: 16 << 30, IdleBytes: 512 << 20, ConcurrentFullLists: 4}, nil},
		{"no limit known", &result.DataMemory{ConcurrentFullLists: -1}, nil},
		{"no prediction", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := judgeMemory(c.m, th, "m")
			if len(fs) != len(c.want) {
				t.Fatalf("%d findings, want %d", len(fs), len(c.want))
			}
			for i, f := range fs {
				if f.Status != c.want[i] || f.Rule.ID != "list-memory" || f.Evidence == "" {
					t.Errorf("finding %+v", f)
				}
			}
		})
	}
}
