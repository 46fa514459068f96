package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
)

// drillFast is a drill's windows short enough for a test, on members
// with short timeouts.
var drillFast = []string{"--before", "1s", "--fault-for", "1500ms", "--after", "1s", "--request-timeout", "2s",
	"--heartbeat-interval", "50", "--election-timeout", "500", "--no-progress"}

// TestDrill runs two faults on real members: a workload each with the
// drill's figures, judged, in JSON and in the textfile; the scratch
// directory and the members gone.
func TestDrill(t *testing.T) {
	d := dirWithPrecious(t)
	before := snapshot(t, d)
	tf := t.TempDir()
	res := runBin(t, runOpts{}, append([]string{"drill", "--dir", d, "--faults", "stop-leader,move-leader", "-o", "json", "--textfile", tf}, drillFast...)...)
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("drill: exit %d\n%s", res.code, res.stderr)
	}
	var r result.Result
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("result: %v\n%s", err, res.stdout)
	}
	if len(r.Workloads) != 2 || r.Workloads[0].Name != "drill-stop-leader" || r.Workloads[1].Name != "drill-move-leader" {
		t.Fatalf("workloads %d, want drill-stop-leader then drill-move-leader", len(r.Workloads))
	}
	for _, w := range r.Workloads {
		dr := w.Drill
		if dr == nil || len(dr.Runs) != 1 || dr.Runs[0].Puts < 150*3 || len(w.Verdicts) < 4 || dr.Runs[0].Leader == "" {
			t.Fatalf("%s: drill %+v, %d verdicts", w.Name, dr, len(w.Verdicts))
		}
		if dr.NewLeaderSeconds <= 0 || dr.Runs[0].NewLeader == dr.Runs[0].Leader {
			t.Errorf("%s: new leader %s after %v s", w.Name, dr.Runs[0].NewLeader, dr.NewLeaderSeconds)
		}
	}
	if stop := r.Workloads[0].Drill; stop.OutageSeconds < 0.25 || stop.OutageSeconds > 2 || stop.SlowRequests+stop.FailedRequests == 0 {
		t.Errorf("stop-leader: outage %v s, %v slow, %v failed: want about the 500 ms election timeout, and late puts", stop.OutageSeconds, stop.SlowRequests, stop.FailedRequests)
	}
	if move := r.Workloads[1].Drill; move.OutageSeconds > 0.5 || move.NewLeaderSeconds > 0.5 {
		t.Errorf("move-leader: outage %v s, new leader after %v s: want a hand-over under the election timeout", move.OutageSeconds, move.NewLeaderSeconds)
	}
	b, err := os.ReadFile(firstFile(t, tf))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `figure="outage"`) || !strings.Contains(string(b), `workload="drill-stop-leader"`) {
		t.Errorf("the textfile has no outage of drill-stop-leader:\n%s", b)
	}
	checkNoScratch(t, d)
	checkSnapshot(t, d, before)
	checkNoMembers(t, d)
}

// TestDrillSignal stops a drill with SIGTERM while its fault holds the
// leader frozen: exit 143, the members and the scratch directory gone.
func TestDrillSignal(t *testing.T) {
	d := dirWithPrecious(t)
	before := snapshot(t, d)
	p := start(t, runOpts{}, append([]string{"drill", "--dir", d, "--faults", "stop-leader", "--before", "1s", "--fault-for", "20s"}, drillFast[4:]...)...)
	waitScratch(t, p, d)
	testutil.WaitFor(t, 30*time.Second, "the members", func() bool { return len(members(d)) == 3 || p.exited() })
	p.signal(t, syscall.SIGTERM)
	res := p.wait(t)
	if res.code != 143 {
		t.Errorf("exit %d, want 143\n%s", res.code, res.stderr)
	}
	checkOneErrorLine(t, res.stderr)
	checkNoScratch(t, d)
	checkSnapshot(t, d, before)
	checkNoMembers(t, d)
}

// TestDrillBadInput: each mistake is one line and exit 2, before any
// member starts.
func TestDrillBadInput(t *testing.T) {
	d := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown fault", []string{"--faults", "kill-everything"}, `unknown fault "kill-everything"`},
		{"one member", []string{"--members", "1"}, "three members"},
		{"no rounds", []string{"--rounds", "0"}, "--rounds 0"},
		{"bad fault length", []string{"--fault-for", "soon"}, "--fault-for"},
		{"election under five heartbeats", []string{"--heartbeat-interval", "100", "--election-timeout", "200"}, "5 x --heartbeat-interval"},
		{"no dir", nil, "--dir is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"drill", "--no-progress"}, c.args...)
			if c.name != "no dir" {
				args = append(args, "--dir", d)
			}
			res := runBin(t, runOpts{}, args...)
			if res.code != exitUsage || !strings.Contains(res.stderr, c.want) {
				t.Errorf("exit %d, stderr %q: want 2 and %q", res.code, res.stderr, c.want)
			}
			checkOneErrorLine(t, res.stderr)
		})
	}
	checkNoScratch(t, d)
}

// members are the pids of the embedded members (etcdbench-memberN,
// re-executed from the binary) whose settings name dir.
func members(dir string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.HasPrefix(string(cmd), "etcdbench-member") {
			continue
		}
		if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && strings.Contains(string(env), dir+"/") {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func checkNoMembers(t *testing.T, dir string) {
	t.Helper()
	if ps := members(dir); len(ps) > 0 {
		t.Errorf("members still run after the drill: pids %v", ps)
	}
}

func firstFile(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		t.Fatalf("no file in %s: %v", dir, err)
	}
	return filepath.Join(dir, ents[0].Name())
}
