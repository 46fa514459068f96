package etcdload

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// latency returns the named latency's count, or -1 when it is missing.
func latencyCount(o *Outcome, name string) int64 {
	for _, l := range o.Workload.Latencies {
		if l.Name == name {
			return l.Count
		}
	}
	return -1
}

func TestRunTxn(t *testing.T) {
	l := testLoad(t, OpTxn)
	l.Total, l.TxnOps, l.KeySpaceSize, l.Clients = 200, 3, 10, 4
	out, err := Run(context.Background(), l)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	w := out.Workload
	if w.Name != "etcd-txn" || w.Ops != 200 || len(out.Errors) != 0 {
		t.Errorf("%s: %d ops, errors %v; want etcd-txn, 200, none", w.Name, w.Ops, out.Errors)
	}
	if want := int64(200 * 3 * (len(l.Prefix()) + l.KeySize + l.ValSize)); w.Bytes != want {
		t.Errorf("bytes %d, want %d (three puts per transaction)", w.Bytes, want)
	}
	if n := countPrefix(t, l.Client.Endpoints, l.Prefix()); n != 0 {
		t.Errorf("%d keys left under %s", n, l.Prefix())
	}
}

func TestRunMixed(t *testing.T) {
	cases := []struct {
		name      string
		ratio     float64
		wantPuts  bool
		wantReads bool
	}{
		{"half", 0.5, true, true},
		{"ranges only", 1, false, true},
		{"puts only", 0, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := testLoad(t, OpMixed)
			l.Total, l.ReadRatio, l.KeySpaceSize, l.Clients = 400, tc.ratio, 50, 4
			out, err := Run(context.Background(), l)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			all, ranges, puts := latencyCount(out, "request"), latencyCount(out, "range"), latencyCount(out, "put")
			if all != 400 || out.Workload.Ops != 400 {
				t.Errorf("request latencies %d, ops %d: want 400", all, out.Workload.Ops)
			}
			if ranges < 0 {
				ranges = 0
			}
			if puts < 0 {
				puts = 0
			}
			if ranges+puts != 400 || (puts > 0) != tc.wantPuts || (ranges > 0) != tc.wantReads {
				t.Errorf("%d ranges and %d puts of 400 at read ratio %g", ranges, puts, tc.ratio)
			}
			if n := countPrefix(t, l.Client.Endpoints, l.Prefix()); n != 0 {
				t.Errorf("%d keys left under %s", n, l.Prefix())
			}
		})
	}
}

func TestRunWatch(t *testing.T) {
	l := testLoad(t, OpWatch)
	l.Total, l.Rate, l.Streams, l.WatchersPerStream, l.KeySpaceSize = 60, 600, 2, 3, 10
	out, err := Run(context.Background(), l)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	w := out.Workload
	if got := latencyCount(out, "put"); got != 60 {
		t.Errorf("%d put latencies, want 60", got)
	}
	// Every watcher sees every put.
	if got := latencyCount(out, "event"); got != 60*6 || w.Ops != 60*6 {
		t.Errorf("%d event latencies, %d ops: want %d", got, w.Ops, 60*6)
	}
	if f := w.Figure("events_missed"); f == nil || f.Value != 0 {
		t.Errorf("events_missed %+v, want 0", f)
	}
	if w.Latencies[0].Name != "event" || w.Latencies[0].MinNs <= 0 {
		t.Errorf("first latency %+v: want the events, each after its put", w.Latencies[0])
	}
	if !strings.Contains(w.Stop.Reason, "60 requests") {
		t.Errorf("stop reason %q: want the 60 puts counted, not the events", w.Stop.Reason)
	}
	if n := countPrefix(t, l.Client.Endpoints, l.Prefix()); n != 0 {
		t.Errorf("%d keys left under %s", n, l.Prefix())
	}
}

func TestRunWatchCancel(t *testing.T) {
	l := testLoad(t, OpWatch)
	l.Total, l.Duration, l.Rate = 0, time.Minute, 200
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	if _, err := Run(ctx, l); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if n := countPrefix(t, l.Client.Endpoints, l.Prefix()); n != 0 {
		t.Errorf("%d keys left under %s after cancel", n, l.Prefix())
	}
}

func TestRunTargets(t *testing.T) {
	c := startCluster(t, 3)
	eps := c.Endpoints()
	leader := ""
	cli := newClient(t, eps)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, ep := range eps {
		st, err := cli.Status(ctx, ep)
		if err != nil {
			t.Fatalf("status of %s: %v", ep, err)
		}
		if st.Header.MemberId == st.Leader {
			leader = ep
		}
	}
	cases := []struct {
		target string
		conns  int
		want   []string // endpoints the note must name
	}{
		{TargetLeader, 2, []string{"target leader", leader}},
		{TargetAll, 3, append([]string{"target all"}, eps...)},
		{TargetAll, 1, []string{"got none", eps[1], eps[2]}},
	}
	// Every load kind against the three members, each connection to
	// another member.
	for _, op := range Ops {
		t.Run("all members "+string(op), func(t *testing.T) {
			l := DefaultLoad(op)
			l.Client.Endpoints, l.RunID = eps, uniqueID(t)
			l.Conns, l.Clients, l.Total, l.KeySpaceSize = 3, 6, 90, 30
			if op == OpWatch {
				l.Total, l.Rate, l.Streams = 30, 300, 3
			}
			out, err := Run(context.Background(), l)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if f := out.Workload.Figure("failed_requests"); out.Workload.Ops == 0 || f == nil || f.Value != 0 {
				t.Errorf("%s: %d ops, failed %+v", op, out.Workload.Ops, f)
			}
			if n := countPrefix(t, eps, l.Prefix()); n != 0 {
				t.Errorf("%d keys left under %s", n, l.Prefix())
			}
		})
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			l := DefaultLoad(OpPut)
			l.Client.Endpoints, l.RunID = eps, uniqueID(t)
			l.Target, l.Conns, l.Clients, l.Total = tc.target, tc.conns, tc.conns, 50
			out, err := Run(context.Background(), l)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			notes := strings.Join(out.Workload.Notes, "\n")
			for _, w := range tc.want {
				if !strings.Contains(notes, w) {
					t.Errorf("notes %q do not name %q", notes, w)
				}
			}
			if out.Workload.Parameters["target"] != tc.target {
				t.Errorf("parameter target %v, want %s", out.Workload.Parameters["target"], tc.target)
			}
		})
	}
}

func TestBenchCompactDefrag(t *testing.T) {
	l := testLoad(t, OpPut)
	l.Total, l.KeySpaceSize, l.ValSize = 300, 300, 1000
	out, err := Bench(context.Background(), l, BenchOptions{After: Maintenance{Compact: true, Defrag: true}})
	if err != nil {
		t.Fatalf("Bench: %v", err)
	}
	w := out.Workload
	before, after := w.Figure("member0_db_size_before_defrag"), w.Figure("member0_db_size_after_defrag")
	if before == nil || after == nil || after.Value <= 0 || after.Value > before.Value {
		t.Errorf("db size before %+v, after %+v: want both, after no larger", before, after)
	}
	if notes := strings.Join(w.Notes, "\n"); !strings.Contains(notes, "compacted the history up to revision") {
		t.Errorf("notes %q do not tell of the compaction", notes)
	}
}

func TestLoadValidateOps(t *testing.T) {
	cases := []struct {
		name string
		op   Op
		set  func(*Load)
	}{
		{"txn without puts", OpTxn, func(l *Load) { l.TxnOps = 0 }},
		{"txn wider than the key space", OpTxn, func(l *Load) { l.TxnOps, l.KeySpaceSize = 5, 4 }},
		{"read ratio over 1", OpMixed, func(l *Load) { l.ReadRatio = 1.5 }},
		{"read ratio negative", OpMixed, func(l *Load) { l.ReadRatio = -0.1 }},
		{"watch without streams", OpWatch, func(l *Load) { l.Streams = 0 }},
		{"watch without watchers", OpWatch, func(l *Load) { l.WatchersPerStream = 0 }},
		{"watch value too short for its stamp", OpWatch, func(l *Load) { l.ValSize = 4 }},
		{"mixed bad consistency", OpMixed, func(l *Load) { l.Consistency = "q" }},
		{"unknown target", OpPut, func(l *Load) { l.Target = "followers" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := DefaultLoad(tc.op)
			l.Client.Endpoints = []string{"http://127.0.0.1:2379"}
			if err := l.Validate(); err != nil {
				t.Fatalf("the defaults of %s do not validate: %v", tc.op, err)
			}
			tc.set(&l)
			if err := l.Validate(); !errors.Is(err, ErrBadLoad) {
				t.Errorf("Validate: %v, want ErrBadLoad", err)
			}
		})
	}
}

// TestRunOpenLoopStopsAtTheEnd asks for far more than the server can do:
// the run ends about at its duration, with the backlog counted as unsent.
func TestRunOpenLoopStopsAtTheEnd(t *testing.T) {
	l := testLoad(t, OpPut)
	l.Total, l.Duration, l.Rate, l.Clients = 0, time.Second, 1e6, 4
	out, err := Run(context.Background(), l)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	w := out.Workload
	if d := time.Duration(w.DurationNs); d > 10*time.Second {
		t.Errorf("a 1 s run at an impossible rate took %v: the backlog was sent", d)
	}
	f := w.Figure("unsent_requests")
	if f == nil || f.Value <= 0 || int64(f.Value)+w.Ops > 1e6 {
		t.Errorf("unsent %+v with %d ops: want the rest of the 1e6 due", f, w.Ops)
	}
}
