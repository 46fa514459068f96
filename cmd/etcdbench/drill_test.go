package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/fusedelay"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/hostetcd"
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
		{"bad db size", []string{"--faults", "defrag-leader", "--db-size", "big"}, "--db-size"},
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

// TestDrillEndpoints drills a cluster of Debian's etcd as a user's:
// the leader moved to the named member and back, another member
// defragmented, the load's keys deleted; every other fault refused.
func TestDrillEndpoints(t *testing.T) {
	es := hostetcd.StartCluster(t, []string{"", "", ""}, "--heartbeat-interval", "50", "--election-timeout", "500")
	var eps []string
	for _, e := range es {
		eps = append(eps, e.Endpoint)
	}
	ep := strings.Join(eps, ",")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	leader := func() uint64 {
		st, err := cli.Status(ctx, eps[0])
		if err != nil {
			t.Fatal(err)
		}
		return st.Leader
	}
	before := leader()
	var to string // a follower, by name
	ml, err := cli.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ml.Members {
		if m.ID != before && to == "" {
			to = m.Name
		}
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"without --yes", nil, "without --yes"},
		{"a fault that breaks a member", []string{"--yes", "--faults", "kill-leader"}, "breaks a member"},
		{"--dir too", []string{"--yes", "--dir", t.TempDir()}, "alternatives"},
	} {
		res := runBin(t, runOpts{}, append([]string{"drill", "--endpoints", ep, "--no-progress"}, c.args...)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%s: exit %d, %q: want 2 and %q", c.name, res.code, res.stderr, c.want)
		}
		checkOneErrorLine(t, res.stderr)
	}
	res := runBin(t, runOpts{}, "drill", "--endpoints", ep, "--yes", "--member", to, "--before", "1s", "--after", "1s", "--request-timeout", "2s",
		"--election-timeout", "500", "--heartbeat-interval", "50", "--no-progress", "-o", "json")
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("drill --endpoints: exit %d\n%s", res.code, res.stderr)
	}
	var r result.Result
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || len(r.Workloads) != 2 {
		t.Fatalf("result: %v\n%s", err, res.stdout)
	}
	for _, w := range r.Workloads {
		d := w.Drill
		switch w.Name {
		case "drill-defrag-member":
			if d.DefragSeconds <= 0 || d.Runs[0].Member != to || d.Runs[0].NewLeader != d.Runs[0].Leader {
				t.Errorf("defrag-member: %+v", d.Runs[0])
			}
		case "drill-move-leader":
			if d.Runs[0].NewLeader != to || d.NewLeaderSeconds <= 0 || d.NewLeaderSeconds > 1 {
				t.Errorf("move-leader: %+v, want the leadership at %s within a second", d.Runs[0], to)
			}
		default:
			t.Errorf("workload %s", w.Name)
		}
	}
	if after := leader(); after != before {
		t.Errorf("leader %x after the drill, %x before: want it moved back", after, before)
	}
	if n, err := cli.Get(ctx, "", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || n.Count != 0 {
		t.Errorf("keys left after the drill: %v, %v", n, err)
	}
}

// TestDrillKilledOnSlowDisks kills a drill (SIGKILL) while its members'
// data are on its FUSE disks: the members die with it, and `clean`
// detaches the dead mounts and removes what it left.
func TestDrillKilledOnSlowDisks(t *testing.T) {
	if err := fusedelay.Usable(); err != nil {
		t.Skip(err)
	}
	d := dirWithPrecious(t)
	before := snapshot(t, d)
	p := start(t, runOpts{}, append([]string{"drill", "--dir", d, "--faults", "slow-follower-disk", "--before", "20s"}, drillFast[4:]...)...)
	waitScratch(t, p, d)
	mounted := func() bool {
		b, _ := os.ReadFile("/proc/self/mountinfo")
		return strings.Contains(string(b), d+"/")
	}
	testutil.WaitFor(t, 30*time.Second, "the members on their disks", func() bool { return mounted() && len(members(d)) == 3 || p.exited() })
	if p.exited() {
		t.Fatalf("the drill ended before its members were on their disks: %s", p.wait(t).stderr)
	}
	p.signal(t, syscall.SIGKILL)
	p.wait(t)
	testutil.WaitFor(t, 10*time.Second, "the members gone with the drill", func() bool { return len(members(d)) == 0 })
	if res := runBin(t, runOpts{}, "clean", "--dir", d); res.code != exitOK {
		t.Fatalf("clean: exit %d\n%s", res.code, res.stderr)
	}
	if mounted() {
		t.Errorf("a mount below %s is left after clean", d)
	}
	checkNoScratch(t, d)
	checkSnapshot(t, d, before)
}
