package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/diagnose/cluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/fusedelay"
	"etcdbench/internal/testutil/hostetcd"
	"etcdbench/internal/verdict"
)

// config is a quick diagnosis of eps: a short window and deadline.
func config(eps []string) cluster.Config {
	return cluster.Config{Endpoints: eps, HTTP: etcdload.HTTPClient(nil), Window: time.Second, Timeout: 2 * time.Second, Reads: 50}
}

func endpoints(es []*hostetcd.Etcd) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Endpoint)
	}
	return out
}

// report runs the diagnosis and returns its cluster report and how long
// it took.
func report(t *testing.T, cfg cluster.Config) (*result.Cluster, *result.Result, error, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := cluster.Run(context.Background(), cfg)
	took := time.Since(start)
	if res == nil {
		t.Fatalf("no report: %v", err)
	}
	return res.Workloads[0].Cluster, res, err, took
}

func rules(c *result.Cluster) []string {
	var out []string
	for _, f := range c.Findings {
		out = append(out, f.Rule+"@"+f.Member)
	}
	return out
}

func dump(c *result.Cluster) string {
	var b strings.Builder
	for _, m := range c.Members {
		fmt.Fprintf(&b, "%+v\n", m)
	}
	for _, f := range c.Findings {
		fmt.Fprintf(&b, "%s %s %s: %s\n", f.Status, f.Rule, f.Member, f.Evidence)
	}
	return b.String()
}

// TestDebianCluster diagnoses a 3-member cluster of Debian's etcd 3.4:
// healthy, one member's disk slow, one member frozen, a NOSPACE alarm,
// then one member stopped.
func TestDebianCluster(t *testing.T) {
	// Data in memory: this test is about what the members say, and a
	// shared machine's disk would make the fresh cluster's syncs a
	// finding.
	var dirs []string
	for range 2 {
		dirs = append(dirs, filepath.Join(testutil.MemDir(t, "diagnose-cluster"), "data"))
	}
	// The third member's syncs wait as long as the test says.
	slow := fusedelay.Mount(t, testutil.MemDir(t, "diagnose-cluster"), 0)
	dirs = append(dirs, filepath.Join(slow.Dir, "data"))
	es := hostetcd.StartCluster(t, dirs, "--quota-backend-bytes", "1048576")
	eps := endpoints(es)
	cfg := config(eps)

	t.Run("healthy", func(t *testing.T) {
		c, res, err, _ := report(t, cfg)
		// An idle member's p99 of a handful of commits is a WARN at most
		// (one slow commit on a busy machine); anything else is a finding.
		for _, f := range c.Findings {
			if f.Status != verdict.Warn.String() || !strings.Contains(f.Evidence, "too few for a p99") {
				err = errors.Join(err, fmt.Errorf("finding %s %s", f.Status, f.Rule))
			}
		}
		if err != nil || res.Failed() {
			t.Fatalf("healthy cluster: err %v, findings %v\n%s", err, rules(c), dump(c))
		}
		leaders := 0
		for i, m := range c.Members {
			if !m.Answered || m.Name != es[i].Name || m.Endpoint != eps[i] || m.Version == "" || m.RaftTerm == 0 || m.Revision == 0 || m.DBSize == 0 || len(m.Members) != 3 || m.HashKV == 0 {
				t.Errorf("member %d: %+v", i, m)
			}
			if m.Quota != 1048576 {
				t.Errorf("member %d: quota %d, want 1048576 from its metrics", i, m.Quota)
			}
			if m.SerializableRead == nil || m.LinearizableRead == nil || m.LinearizableRead.Count != int64(cfg.Reads) {
				t.Errorf("member %d: reads %+v %+v", i, m.SerializableRead, m.LinearizableRead)
			}
			if m.IsLeader {
				leaders++
			}
		}
		if leaders != 1 || c.Voters != 3 || c.Answering != 3 || c.Quorum != 2 {
			t.Errorf("leaders %d, voters %d answering %d quorum %d", leaders, c.Voters, c.Answering, c.Quorum)
		}
	})

	t.Run("slow disk", func(t *testing.T) {
		slow.SetDelay(30 * time.Millisecond)
		defer slow.SetDelay(0)
		// Writes through the window: every member syncs its WAL.
		stop := writeThrough(t, es[0])
		c, res, err, _ := report(t, cfg)
		stop()
		if err != nil || !res.Failed() {
			t.Fatalf("err %v, failed %v", err, res.Failed())
		}
		var named bool
		for _, f := range c.Findings {
			if f.Rule == "slow-disk-wal" {
				if f.Member != es[2].Name+" ("+es[2].Endpoint+")" {
					t.Errorf("slow-disk-wal names %s, want only %s: %s", f.Member, es[2].Name, f.Evidence)
				}
				named = named || f.Value >= 0.03 && strings.Contains(f.Evidence, "WAL fdatasync p99")
			}
		}
		if !named {
			t.Errorf("the slow disk of %s is not named with its figures: %v\n%s", es[2].Name, rules(c), dump(c))
		}
		if p := res.Workloads[0].Figure("member2_wal_fsync_p99"); p == nil || p.Value < 0.03 {
			t.Errorf("member2_wal_fsync_p99 %+v, want >= 30ms", p)
		}
	})

	t.Run("learner lags", func(t *testing.T) {
		lm := fusedelay.Mount(t, testutil.MemDir(t, "diagnose-cluster"), 0)
		learner := hostetcd.JoinLearner(t, es, filepath.Join(lm.Dir, "data"), "--quota-backend-bytes", "1048576")
		defer learner.Stop()
		lm.SetDelay(300 * time.Millisecond)
		stop := writeThrough(t, es[0])
		// The writes are under way before the members are asked.
		cli := es[0].Client(t)
		defer cli.Close()
		rev := func() int64 {
			r, err := cli.Get(context.Background(), "/through/0")
			if err != nil {
				return 0
			}
			return r.Header.Revision
		}
		from := rev()
		if !testutil.Poll(20*time.Second, func() bool { return rev() >= from+100 }) {
			t.Fatalf("100 writes did not pass in 20 s")
		}
		lcfg := config(append(append([]string(nil), eps...), learner.Endpoint))
		// A lag of thousands of entries takes minutes of writes: the
		// limit is lowered to what a 300 ms sync leaves behind.
		th := cluster.DefaultThresholds()
		th.Lag.Limit = 10
		lcfg.Thresholds = &th
		c, _, err, _ := report(t, lcfg)
		stop()
		if err != nil {
			t.Fatalf("err %v\n%s", err, dump(c))
		}
		m := c.Members[3]
		if !m.IsLearner || m.Name != learner.Name || m.SerializableRead == nil || m.LinearizableRead != nil {
			t.Errorf("learner: %+v", m)
		}
		if c.Voters != 3 || c.Quorum != 2 {
			t.Errorf("a learner counted as a voter: voters %d quorum %d", c.Voters, c.Quorum)
		}
		var named bool
		for _, f := range c.Findings {
			named = named || f.Rule == "raft-lag" && f.Status == "WARN" && strings.Contains(f.Member, learner.Name) && strings.Contains(f.Evidence, "learner")
		}
		if !named {
			t.Errorf("the lagging learner is not named: %v\n%s", rules(c), dump(c))
		}
	})

	t.Run("frozen", func(t *testing.T) {
		frozen := es[2]
		if err := syscall.Kill(frozen.PID(), syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = syscall.Kill(frozen.PID(), syscall.SIGCONT) }()
		// The signal lands asynchronously: wait until the kernel says so.
		var st []byte
		if !testutil.Poll(5*time.Second, func() bool {
			st, _ = os.ReadFile(fmt.Sprintf("/proc/%d/stat", frozen.PID()))
			return strings.Contains(string(st), ") T ")
		}) {
			t.Fatalf("etcd %d is not stopped: %s", frozen.PID(), st)
		}
		c, _, err, took := report(t, cfg)
		if !errors.Is(err, cluster.ErrUnreachable) {
			t.Fatalf("err %v, want ErrUnreachable\n%s", err, dump(c))
		}
		// Generous: the window and two deadlines, twice over.
		if bound := 2 * (cfg.Window + 2*cfg.Timeout); took > bound {
			t.Errorf("took %v with a frozen member, want under %v", took, bound)
		}
		m := c.Members[2]
		if m.Answered || m.Name != frozen.Name || !strings.Contains(m.Reason, "not answering") {
			t.Errorf("frozen member: %+v", m)
		}
		if len(c.Findings) == 0 || c.Findings[0].Rule != "member-unreachable" || !strings.Contains(c.Findings[0].Member, frozen.Name) {
			t.Errorf("findings %v, want member-unreachable of %s first\n%s", rules(c), frozen.Name, dump(c))
		}
		for i := range 2 {
			if !c.Members[i].Answered || c.Members[i].LinearizableRead == nil {
				t.Errorf("member %d not reported in full: %+v", i, c.Members[i])
			}
		}
	})

	t.Run("nospace", func(t *testing.T) {
		cli := es[0].Client(t)
		defer cli.Close()
		val := strings.Repeat("x", 100<<10)
		var err error
		for i := 0; i < 100 && err == nil; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err = cli.Put(ctx, fmt.Sprintf("/fill/%d", i), val)
			cancel()
		}
		if err == nil || !strings.Contains(err.Error(), "space exceeded") {
			t.Fatalf("filling a 1 MiB quota: %v", err)
		}
		c, res, err, _ := report(t, cfg)
		if err != nil || !res.Failed() {
			t.Fatalf("err %v, failed %v", err, res.Failed())
		}
		nospace := 0
		for _, f := range c.Findings {
			if f.Rule == "alarm-nospace" && f.Status == "FAIL" && f.Endpoint != "" && strings.Contains(f.Advice, "alarm disarm") {
				nospace++
			}
		}
		if nospace == 0 {
			t.Errorf("no alarm-nospace finding naming a member: %v\n%s", rules(c), dump(c))
		}
		alarmed := 0
		for _, m := range c.Members {
			if len(m.Alarms) > 0 && m.Alarms[0] == "NOSPACE" {
				alarmed++
			}
		}
		if alarmed == 0 {
			t.Errorf("no member lists the NOSPACE alarm\n%s", dump(c))
		}
	})

	t.Run("stopped", func(t *testing.T) {
		es[1].Stop()
		c, _, err, _ := report(t, cfg)
		if !errors.Is(err, cluster.ErrUnreachable) {
			t.Fatalf("err %v, want ErrUnreachable\n%s", err, dump(c))
		}
		m := c.Members[1]
		if m.Answered || m.Name != es[1].Name || !strings.Contains(m.Reason, "down") {
			t.Errorf("stopped member: %+v", m)
		}
		if c.Voters != 3 || c.Answering != 2 || c.Quorum != 2 {
			t.Errorf("quorum: voters %d answering %d quorum %d, want 3 2 2", c.Voters, c.Answering, c.Quorum)
		}
		for _, f := range c.Findings {
			if f.Rule == "quorum-lost" {
				t.Errorf("quorum held but reported lost: %s", f.Evidence)
			}
		}
		if !strings.Contains(rules(c)[0], "member-unreachable@"+es[1].Name) {
			t.Errorf("findings %v, want member-unreachable of %s first", rules(c), es[1].Name)
		}
	})
}

// writeThrough puts small values through e until the returned stop is
// called, which fails the test if a put failed.
func writeThrough(t *testing.T, e *hostetcd.Etcd) (stop func()) {
	t.Helper()
	cli := e.Client(t)
	done := make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		var err error
		for i := 0; err == nil; i++ {
			select {
			case <-done:
				wrote <- nil
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err = cli.Put(ctx, fmt.Sprintf("/through/%d", i%100), "v")
			cancel()
		}
		wrote <- err
	}()
	return func() {
		t.Helper()
		close(done)
		err := <-wrote
		cli.Close()
		if err != nil {
			t.Fatalf("writing during the diagnosis: %v", err)
		}
	}
}

// TestDebianClusterApart diagnoses a healthy, idle 3-member cluster of
// Debian's etcd 3.4 whose members are 50 ms apart (peernet links): its
// followers' linearizable reads wait for a round trip to the leader and
// its own (ReadIndex), which is the network's, not a busy member's, and
// the report's own reads are not the slow applies it judges.
func TestDebianClusterApart(t *testing.T) {
	var dirs []string
	for range 3 {
		dirs = append(dirs, filepath.Join(testutil.MemDir(t, "diagnose-apart"), "data"))
	}
	es := hostetcd.StartClusterApart(t, dirs, 50*time.Millisecond)
	cfg := config(endpoints(es))
	cfg.Window, cfg.Reads = 2*time.Second, 20
	c, res, err, _ := report(t, cfg)
	if err != nil {
		t.Fatalf("diagnosis: %v\n%s", err, dump(c))
	}
	t.Logf("findings:\n%s", dump(c))
	var network *result.ClusterFinding
	for i, f := range c.Findings {
		switch f.Kind {
		case "cpu", "member":
			t.Errorf("a %s finding on a healthy cluster 50 ms apart: %s %s: %s", f.Kind, f.Rule, f.Member, f.Evidence)
		case "network":
			network = &c.Findings[i]
		}
	}
	if res.Failed() {
		t.Errorf("a healthy cluster 50 ms apart failed its diagnosis")
	}
	if network == nil {
		t.Fatalf("no network finding:\n%s", dump(c))
	}
	for _, want := range []string{"round trip", "--heartbeat-interval", "--election-timeout"} {
		if !strings.Contains(network.Evidence+" "+network.Advice, want) {
			t.Errorf("the network finding does not say %q: %s / %s", want, network.Evidence, network.Advice)
		}
	}
	// The members run here: their timeouts are read from their processes
	// (etcd's defaults: none is given).
	for _, m := range c.Members {
		if m.HeartbeatIntervalNs != int64(100*time.Millisecond) || m.ElectionTimeoutNs != int64(time.Second) || !strings.HasPrefix(m.TimeoutsFrom, "etcd's defaults") {
			t.Errorf("%s: timeouts %d/%d from %q, want etcd's defaults read from its process", m.Name, m.HeartbeatIntervalNs, m.ElectionTimeoutNs, m.TimeoutsFrom)
		}
		// And their memory: resident, against the limit of their process
		// (its cgroup's or the machine's).
		if m.ResidentBytes <= 0 || m.MemoryLimitBytes < m.ResidentBytes || m.MemoryLimitFrom == "" {
			t.Errorf("%s: resident %d of a %d limit (%q)", m.Name, m.ResidentBytes, m.MemoryLimitBytes, m.MemoryLimitFrom)
		}
	}
}
