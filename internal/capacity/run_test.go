package capacity

import (
	"context"
	"errors"
	"strings"
	"testing"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// The CPU side's failure keeps the disk's answer, said in a note; an
// interruption stays an interruption.
func TestCPUSideFailed(t *testing.T) {
	var w result.Workload
	if err := cpuSideFailed(context.Background(), &w, errors.New("etcd: member0 did not\nstart")); err != nil || len(w.Notes) != 1 ||
		!strings.Contains(w.Notes[0], "not estimated: etcd: member0 did not start") {
		t.Fatalf("err %v, notes %q", err, w.Notes)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w = result.Workload{}
	if err := cpuSideFailed(ctx, &w, context.Canceled); !errors.Is(err, context.Canceled) || len(w.Notes) != 0 {
		t.Fatalf("interrupted: err %v, notes %q", err, w.Notes)
	}
	if err := cpuSideFailed(context.Background(), &w, nil); err != nil || len(w.Notes) != 0 {
		t.Fatalf("no error: %v %q", err, w.Notes)
	}
}

// One headline: capacity_min judges the estimate, not the disk's model
// alone (a PASS "carries m" above an etcd side that carried none); with
// only undecided steps above a low answer it warns, never fails; the
// neighbours' share ends the estimate's evidence.
func TestHeadline(t *testing.T) {
	th := verdict.Defaults()
	diskSide := func() *result.Capacity {
		return &result.Capacity{Rate: 1740, Upper: 2000, Decided: true, Confidence: 0.95, StepConfidence: 0.998, Criterion: "disk"}
	}
	diskVerdict := func(c *result.Capacity) result.Workload {
		return result.Workload{Verdicts: []verdict.Verdict{verdict.JudgeCapacity(th.CapacityMin, th.CapacityHeavy, c.Rate, true, 0.95, "")}}
	}
	for _, tc := range []struct {
		name   string
		cpu    *result.Capacity
		others *result.Neighbours
		status verdict.Status
		value  float64
		words  string
	}{
		{"etcd side carries none", &result.Capacity{Rate: 0, Upper: 19, Decided: true, Criterion: "etcd"}, &result.Neighbours{CPUs: 1.9, HostCPUs: 2}, verdict.Fail, 0,
			"other processes kept 1.9 of the machine's 2 CPUs busy and wrote 600 times a second"},
		{"etcd side undecided above", &result.Capacity{Rate: 35, Decided: true, Criterion: "etcd",
			Steps: []result.CapacityStep{{Phase: "ladder", Rate: 70, Status: verdict.Warn}}}, nil, verdict.Warn, 35, ""},
		// The etcd side of a run beside two busy loops and fio writing
		// 1,000 times a second (cap1 of the busy-node bench's notes):
		// failed from 1,200 down to 27, passed 25 and, above the
		// failing 27, the probe at 54: never a FAIL at 25, an unstable
		// answer between 25 and 54 with what the neighbours took.
		{"etcd side unstable", &result.Capacity{Rate: 25, Upper: 27, Decided: true, Criterion: "etcd", Steps: []result.CapacityStep{
			{Phase: "ladder", Rate: 150, Status: verdict.Fail, Decided: true},
			{Phase: "confirm", Rate: 150, Status: verdict.Fail, Decided: true},
			{Phase: "down", Rate: 19, Status: verdict.Pass, Decided: true},
			{Phase: "bisect", Rate: 27, Status: verdict.Fail, Decided: true},
			{Phase: "bisect", Rate: 25, Status: verdict.Pass, Decided: true},
			{Phase: "probe", Rate: 54, Status: verdict.Pass, Decided: true},
		}}, &result.Neighbours{CPUs: 2, HostCPUs: 2}, verdict.Warn, 25, "other processes kept 2.0 of the machine's 2 CPUs busy"},
		{"etcd side carries m", &result.Capacity{Rate: 1320, Upper: 1500, Decided: true, Criterion: "etcd"}, &result.Neighbours{CPUs: 0.02, HostCPUs: 2}, verdict.Pass, 1320, "; other processes wrote 600 times a second to the device while"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := diskSide()
			d.BackgroundWriteIOPS = 600
			d.Etcd = Estimate(d, tc.cpu)
			w := diskVerdict(d)
			w.Capacity = d
			Answer(&w, tc.cpu, tc.others)
			if len(w.Verdicts) != 1 {
				t.Fatalf("%d verdicts, want the one headline", len(w.Verdicts))
			}
			v := w.Verdicts[0]
			if v.Check != th.CapacityMin.ID || v.Status != tc.status || v.Value != tc.value {
				t.Errorf("verdict %s %s %v, want %s at %v", v.Check, v.Status, v.Value, tc.status, tc.value)
			}
			if unstable := tc.cpu.PassedAbove() > 0; unstable != strings.Contains(v.Detail, "unstable: an etcd here carried 25 puts/s, failed at 27 and carried 54 above it, so what it carries lies between 25 and 54 puts/s") ||
				unstable && !strings.Contains(v.Detail, "other processes took 100 % of the machine's 2 CPUs and 600 writes/s on the device") {
				t.Errorf("unstable %v: detail %q", unstable, v.Detail)
			}
			if !strings.Contains(d.Etcd.Evidence, tc.words) || (tc.words == "" && strings.Contains(d.Etcd.Evidence, "other processes")) {
				t.Errorf("evidence %q, want %q", d.Etcd.Evidence, tc.words)
			}
			if tc.others != nil && (d.Etcd.Neighbours == nil || d.Etcd.Neighbours.WriteIOPS != 600) {
				t.Errorf("neighbours %+v", d.Etcd.Neighbours)
			}
		})
	}
	// Without the etcd side the disk's answer is the headline.
	d := diskSide()
	w := diskVerdict(d)
	w.Capacity = d
	Answer(&w, nil, nil)
	if v := w.Verdicts[0]; v.Value != 1740 || v.Status != verdict.Pass || !strings.Contains(v.Detail, "puts/s") {
		t.Errorf("disk alone: %+v", v)
	}
}
