package etcdload

import (
	"context"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// A member in a process of its own, as every command runs it: its CPU,
// cores and proposal backlog come out of its /metrics, the load
// generator's CPU and the machine's from this process and /proc/stat.
func TestBenchMemberEvidence(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: t.TempDir(), OwnProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	l := DefaultLoad(OpPut)
	l.Client.Endpoints, l.RunID = c.Endpoints(), uniqueID(t)
	l.Total, l.Clients, l.Rate = 0, 8, 400
	l.Duration = 1500 * time.Millisecond
	out, err := Bench(ctx, l, BenchOptions{Targets: observe.EmbeddedTargets(c.MetricsURLs()), Thresholds: verdict.Defaults(), Sample: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w := out.Workload
	positive := func(name string, most float64) {
		t.Helper()
		if f := w.Figure(name); f == nil || !(f.Value > 0 && f.Value <= most) {
			t.Errorf("%s = %+v, want in (0, %v]", name, f, most)
		}
	}
	host := w.Figure(observe.HostCPUsFigure)
	if host == nil || host.Value < 1 {
		t.Fatalf("%s = %+v", observe.HostCPUsFigure, host)
	}
	positive("member0_cpu", host.Value)
	positive("member0_cores", host.Value)
	positive(observe.HostCPUBusyFigure, 1)
	positive("member0_backlog_samples", 10)
	for _, name := range []string{"member0_proposals_pending_max", "member0_proposals_unapplied_max"} {
		if f := w.Figure(name); f == nil || f.Value < 0 || f.Value > 600 {
			t.Errorf("%s = %+v, want a count within the load's puts", name, f)
		}
	}
	for _, f := range w.Figures {
		t.Logf("%s %s", f.Name, units.FormatValue(f.Value, f.Unit))
	}
	if m := out.Members; len(m) != 1 || m[0].CPU != w.Figure("member0_cpu").Value || m[0].Backlog.Samples < 1 || out.Host == nil {
		t.Errorf("the typed members %+v and host %+v do not carry what the figures say", m, out.Host)
	}
	if p := w.Process; p == nil || p.UserNs+p.SystemNs <= 0 {
		t.Errorf("the load generator's CPU: %+v", p)
	}
}
