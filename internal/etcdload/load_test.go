package etcdload

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func withCount() []clientv3.OpOption {
	return []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCountOnly()}
}

func testLoad(t *testing.T, op Op) Load {
	l := DefaultLoad(op)
	l.Client.Endpoints = sharedCluster(t).Endpoints()
	l.RunID = uniqueID(t)
	return l
}

func TestRunPut(t *testing.T) {
	cases := []struct {
		name string
		set  func(*Load)
	}{
		{"closed loop, random keys", func(l *Load) { l.Clients, l.Conns, l.KeySpaceSize = 4, 2, 50 }},
		{"sequential keys", func(l *Load) { l.SequentialKeys, l.KeySpaceSize = true, 1000 }},
		{"open loop", func(l *Load) { l.Rate, l.Clients = 2000, 4 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := testLoad(t, OpPut)
			l.Total = 300
			tc.set(&l)
			out, err := Run(context.Background(), l)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			w := out.Workload
			if w.Ops != l.Total || w.Latencies[0].Count != l.Total {
				t.Errorf("ops %d, latencies %d: want %d", w.Ops, w.Latencies[0].Count, l.Total)
			}
			if w.Name != "etcd-put" || w.Latencies[0].Name != "request" || w.Verdicts == nil {
				t.Errorf("name %q, latency %q, verdicts %v", w.Name, w.Latencies[0].Name, w.Verdicts)
			}
			var series int64
			for _, s := range w.Series {
				series += s.Ops
			}
			if series != l.Total {
				t.Errorf("series holds %d requests, want %d", series, l.Total)
			}
			if len(out.Errors) != 0 {
				t.Errorf("errors: %v", out.Errors)
			}
			if n := countPrefix(t, l.Client.Endpoints, l.Prefix()); n != 0 {
				t.Errorf("%d keys left under %s", n, l.Prefix())
			}
		})
	}
}

func TestRunOpenLoopKeepsRate(t *testing.T) {
	l := testLoad(t, OpPut)
	l.Total, l.Rate, l.Clients = 100, 500, 2
	out, err := Run(context.Background(), l)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// 100 requests due over 0.2 s cannot all be done much sooner.
	if d := time.Duration(out.Workload.DurationNs); d < 190*time.Millisecond {
		t.Errorf("100 requests at 500/s took %v, want at least 0.2 s", d)
	}
}

func TestRunRange(t *testing.T) {
	for _, cons := range []string{Linearizable, Serializable} {
		t.Run(cons, func(t *testing.T) {
			l := testLoad(t, OpRange)
			l.Total, l.KeySpaceSize, l.Clients, l.Consistency = 200, 20, 2, cons
			out, err := Run(context.Background(), l)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out.Workload.Ops != 200 || out.Workload.Name != "etcd-range" {
				t.Errorf("%s: %d ops, want 200 etcd-range", out.Workload.Name, out.Workload.Ops)
			}
			if n := countPrefix(t, l.Client.Endpoints, l.Prefix()); n != 0 {
				t.Errorf("%d keys left under %s", n, l.Prefix())
			}
		})
	}
}

func TestRunDuration(t *testing.T) {
	l := testLoad(t, OpPut)
	l.Total, l.Duration = 0, 1100*time.Millisecond
	var ticks atomic.Int64
	l.OnSecond = func(el time.Duration, sent int64) {
		if el >= time.Second && sent > 0 {
			ticks.Add(1)
		}
	}
	out, err := Run(context.Background(), l)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Workload.Stop.Mode != "time" || out.Workload.Ops == 0 {
		t.Errorf("stop %+v, %d ops", out.Workload.Stop, out.Workload.Ops)
	}
	if n := ticks.Load(); n != 1 {
		t.Errorf("OnSecond called %d times with progress in 1.1 s, want 1", n)
	}
	if n := len(out.Workload.Series); n != 2 {
		t.Errorf("%d seconds in the series of a 1.1 s run, want 2", n)
	}
}

func TestRunCancelDeletesKeys(t *testing.T) {
	l := testLoad(t, OpPut)
	l.Total, l.Duration, l.Clients, l.KeySpaceSize = 0, time.Minute, 4, 100000
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	out, err := Run(ctx, l)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if out == nil || out.Workload.Ops == 0 {
		t.Fatalf("no partial outcome with requests: %+v", out)
	}
	if !strings.Contains(out.Workload.Stop.Reason, "interrupted") {
		t.Errorf("stop reason %q", out.Workload.Stop.Reason)
	}
	if n := countPrefix(t, l.Client.Endpoints, l.Prefix()); n != 0 {
		t.Errorf("%d keys left under %s after cancel", n, l.Prefix())
	}
}

func TestRunRefusesNonEmptyPrefix(t *testing.T) {
	l := testLoad(t, OpPut)
	cli := newClient(t, l.Client.Endpoints)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, l.Prefix()+"mine", "x"); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), l)
	if !errors.Is(err, ErrPrefixNotEmpty) {
		t.Fatalf("Run: %v, want ErrPrefixNotEmpty", err)
	}
	resp, err := cli.Get(ctx, l.Prefix()+"mine")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the existing key is gone (%v, %v)", resp, err)
	}
	cli.Delete(ctx, l.Prefix(), clientv3.WithPrefix())
}

func TestRunUnreachable(t *testing.T) {
	l := DefaultLoad(OpPut)
	l.Client.Endpoints = []string{"http://127.0.0.1:1"}
	l.Client.DialTimeout = 300 * time.Millisecond
	if _, err := Run(context.Background(), l); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Run: %v, want ErrUnreachable", err)
	}
}

func TestLoadValidate(t *testing.T) {
	cases := []struct {
		name string
		set  func(*Load)
	}{
		{"unknown op", func(l *Load) { l.Op = "lease" }},
		{"no endpoints", func(l *Load) { l.Client.Endpoints = nil }},
		{"no conns", func(l *Load) { l.Conns = 0 }},
		{"no clients", func(l *Load) { l.Clients = 0 }},
		{"endless", func(l *Load) { l.Total, l.Duration = 0, 0 }},
		{"negative rate", func(l *Load) { l.Rate = -1 }},
		{"key too short", func(l *Load) { l.KeySize, l.KeySpaceSize = 2, 1000 }},
		{"bad consistency", func(l *Load) { l.Op, l.Consistency = OpRange, "x" }},
		{"bad target", func(l *Load) { l.Target = "followers" }},
		{"negative request timeout", func(l *Load) { l.RequestTimeout = -time.Second }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := DefaultLoad(OpPut)
			l.Client.Endpoints = []string{"http://127.0.0.1:2379"}
			tc.set(&l)
			if err := l.Validate(); !errors.Is(err, ErrBadLoad) {
				t.Errorf("Validate: %v, want ErrBadLoad", err)
			}
		})
	}
}

func TestKeyBuf(t *testing.T) {
	kb := newKeyBuf("/p/", 4)
	// In this order: the first key, the same one again (kept), others,
	// and back to one built before.
	for _, c := range []struct {
		n    int
		want string
	}{{0, "/p/0000"}, {0, "/p/0000"}, {7, "/p/0007"}, {1234, "/p/1234"}, {1234, "/p/1234"}, {7, "/p/0007"}} {
		if got := kb.key(c.n); got != c.want {
			t.Errorf("key(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestRunOpenLoopCountsFromDueTime checks the coordinated-omission
// correction: 200 requests due within 2 ms but sent by one client one after
// another wait for each other, and that wait is latency. The last request
// is due about at the start and completes at the end, so the slowest
// latency is close to the whole run (a closed loop would report one
// request's time).
func TestRunOpenLoopCountsFromDueTime(t *testing.T) {
	l := testLoad(t, OpPut)
	l.Total, l.Rate, l.Clients = 200, 100000, 1
	out, err := Run(context.Background(), l)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	w := out.Workload
	if slowest, run := w.Latencies[0].MaxNs, w.DurationNs; slowest < run/2 {
		t.Errorf("slowest latency %v in a %v run: the queueing behind earlier requests is not counted",
			time.Duration(slowest), time.Duration(run))
	}
}

func TestRequestContext(t *testing.T) {
	eps := sharedCluster(t).Endpoints()
	cases := []struct {
		name      string
		interrupt bool
	}{
		{"interrupted: the connections are closed", true},
		{"finished: the connections stay open", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conns := []*clientv3.Client{newClient(t, eps), newClient(t, eps)}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			reqCtx, release := requestContext(ctx, conns)
			if reqCtx.Done() != nil {
				t.Fatal("the request context can be cancelled: gRPC would register each request with it")
			}
			if tc.interrupt {
				cancel()
			}
			release()
			for i, c := range conns {
				if closed := c.Ctx().Err() != nil; closed != tc.interrupt {
					t.Errorf("connection %d closed: %v, want %v", i, closed, tc.interrupt)
				}
			}
		})
	}
}

// OnRequest hears of every request, in time or failed; a request that
// outlives RequestTimeout fails; balanced connections reach etcd.
func TestRunOnRequestAndTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		fail    bool
	}{{"in time", time.Minute, false}, {"timed out", time.Nanosecond, true}} {
		t.Run(tc.name, func(t *testing.T) {
			l := testLoad(t, OpPut)
			l.Total, l.Clients, l.Conns, l.Target, l.RequestTimeout = 200, 4, 2, TargetBalanced, tc.timeout
			var mu sync.Mutex
			var heard, failed int64
			l.OnRequest = func(due, done time.Time, err error) {
				mu.Lock()
				defer mu.Unlock()
				heard++
				if err != nil {
					failed++
				}
				if done.Before(due) {
					t.Errorf("a request done at %v before its due time %v", done, due)
				}
			}
			out, err := Run(context.Background(), l)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if heard != l.Total {
				t.Errorf("OnRequest heard %d requests of %d", heard, l.Total)
			}
			if want := map[bool]int64{true: l.Total, false: 0}[tc.fail]; failed != want || out.Failed() != want {
				t.Errorf("%d failed (outcome %d): want %d", failed, out.Failed(), want)
			}
		})
	}
}
