package etcdload

import (
	"fmt"
	"math"

	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/verdict"
)

// JudgeHealth warns about what else went wrong in a member during the
// load: leader changes (an election stalled writes) and slow applies
// (applies over etcd's --warning-apply-duration), with the diagnosis
// thresholds and their sources. They are warnings, not failures: a load
// test may overload a member on purpose, and the disk verdicts already
// judge the disk.
func JudgeHealth(t verdict.DiagnoseThresholds, ms []observe.Member) []verdict.Verdict {
	var vs []verdict.Verdict
	for _, m := range ms {
		for _, c := range []struct {
			th     verdict.Threshold
			n      float64 // NaN: the member does not count it
			advice string
		}{
			{t.LeaderChanges, m.LeaderChanges, "an election stalled writes during the load: heartbeats were late (slow disk or CPU starvation) or a member was lost; see the members' logs and etcdbench diagnose"},
			{t.SlowApplies, m.SlowApplies, "applies took longer than etcd's --warning-apply-duration (100 ms): the member was short of CPU or disk; see etcdbench diagnose"},
		} {
			n := c.n
			if math.IsNaN(n) {
				continue
			}
			v := verdict.Verdict{
				Check: c.th.ID, Title: c.th.Title + " during the load (" + m.Target.Name + ")", Value: n, Unit: c.th.Unit,
				Limit: c.th.Limit, Comparison: "<", Source: c.th.Source, Status: verdict.Pass,
				Detail: fmt.Sprintf("%.0f during the load", n),
			}
			if n >= c.th.Limit {
				v.Status = verdict.Warn
				v.Detail = fmt.Sprintf("%.0f during the load: %s", n, c.advice)
			}
			vs = append(vs, v)
		}
	}
	return vs
}
