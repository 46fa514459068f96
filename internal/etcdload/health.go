package etcdload

import (
	"fmt"

	"etcdbench/internal/verdict"
)

// JudgeHealth warns about what else went wrong in a member during the
// load: leader changes (an election stalled writes) and slow applies
// (applies over etcd's --warning-apply-duration), with the diagnosis
// thresholds and their sources. They are warnings, not failures: a load
// test may overload a member on purpose, and the disk verdicts already
// judge the disk.
func JudgeHealth(t verdict.DiagnoseThresholds, mds []MemberDisk) []verdict.Verdict {
	var vs []verdict.Verdict
	for _, md := range mds {
		for _, c := range []struct {
			th     verdict.Threshold
			suffix string
			advice string
		}{
			{t.LeaderChanges, "_leader_changes", "an election stalled writes during the load: heartbeats were late (slow disk or CPU starvation) or a member was lost; see the members' logs and etcdbench diagnose"},
			{t.SlowApplies, "_slow_applies", "applies took longer than etcd's --warning-apply-duration (100 ms): the member was short of CPU or disk; see etcdbench diagnose"},
		} {
			var n float64
			found := false
			for _, f := range md.Others {
				if f.Name == md.Target.Name+c.suffix {
					n, found = f.Value, true
				}
			}
			if !found {
				continue
			}
			v := verdict.Verdict{
				Check: c.th.ID, Title: c.th.Title + " during the load (" + md.Target.Name + ")", Value: n, Unit: c.th.Unit,
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
