package verdict

import (
	"testing"
	"time"
)

func TestJudgeDrill(t *testing.T) {
	vs := JudgeDrill(DrillDefaults(), DrillFigures{Outage: 12 * time.Second, P99During: 2 * time.Second, NewLeader: 3 * time.Second, Election: time.Second, RTT: 50 * time.Millisecond})
	want := map[string]Status{"outage_renew_deadline": Fail, "outage_lease_duration": Pass, "outage_node_lease": Pass, "put_p99_during_fault": Fail, "new_leader": Fail}
	if len(vs) != len(want) {
		t.Fatalf("%d verdicts, want %d: %+v", len(vs), len(want), vs)
	}
	for _, v := range vs {
		if s, ok := want[v.Check]; !ok || v.Status != s || v.Source == "" || v.Detail == "" {
			t.Errorf("%s: %v (%q), want %v with a source and words", v.Check, v.Status, v.Detail, s)
		}
	}
	if got := ExpectedNewLeader(time.Second, 50*time.Millisecond); got != 2050*time.Millisecond {
		t.Errorf("expected new leader %v, want 2.05s", got)
	}
	if vs := JudgeDrill(DrillDefaults(), DrillFigures{}); len(vs) != 4 {
		t.Errorf("a leader that kept its place: %d verdicts, want no new-leader one", len(vs))
	}
}
