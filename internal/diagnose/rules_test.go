package diagnose

import (
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/verdict"
)

// fine is a member with every figure under its limit.
func fine() Member {
	return Member{
		Name: "member0", Source: "test",
		WALFsync:      Quantiles{P50: 0.002, P99: 0.004, Count: 1000},
		BackendCommit: Quantiles{P50: 0.005, P99: 0.010, Count: 100},
		Apply:         Quantiles{P50: 0.0002, P99: 0.002, Count: 1000},
		PeerRTTP99:    map[string]float64{"8e9e05c52164694d": 0.002}, PeerRTTCount: map[string]float64{"8e9e05c52164694d": 100},
		HasLeader: 1, ProposalsPending: 2, ProposalsCommitted: 1000, CompactionPauseP99: 0.01, Defrags: 0,
		DBSize: 200 << 20, DBInUse: 150 << 20, Quota: 2 << 30,
		CPUSeconds: 3, Cores: 2, CoresFrom: "test", Resident: 100 << 20, GCs: 3, GCSeconds: 0.001,
		GRPCByCode: map[string]float64{"OK": 1000},
	}
}

func TestRules(t *testing.T) {
	cases := []struct {
		name   string
		mod    func(*Member)
		logs   *LogSummary
		top    string // first finding's rule; "" healthy
		status verdict.Status
		value  float64 // the top finding's fact (NaN: a finding of no measured value)
	}{
		{"healthy", func(*Member) {}, nil, "", verdict.Pass, 0},
		{"slow WAL", func(m *Member) { m.WALFsync.P99 = 0.031 }, nil, "slow-disk-wal", verdict.Fail, 0.031},
		{"slow backend only", func(m *Member) { m.BackendCommit.P99 = 0.060 }, nil, "slow-disk-backend", verdict.Fail, 0.060},
		{"one slow commit of an idle member", func(m *Member) { m.BackendCommit.P99, m.BackendCommit.Count = 0.032, 1 }, nil, "slow-disk-backend", verdict.Warn, 0.032},
		{"a few slow syncs", func(m *Member) { m.WALFsync.P99, m.WALFsync.Count = 0.031, 19 }, nil, "slow-disk-wal", verdict.Warn, 0.031},
		{"slow syncs, enough of them", func(m *Member) { m.WALFsync.P99, m.WALFsync.Count = 0.031, 20 }, nil, "slow-disk-wal", verdict.Fail, 0.031},
		{"slow applies, disk fine: CPU", func(m *Member) { m.Apply.P99 = 0.3; m.SlowApplies = 12 }, nil, "slow-applies", verdict.Fail, 0.3},
		{"slow applies and slow disk: the disk", func(m *Member) { m.Apply.P99 = 0.3; m.WALFsync.P99 = 0.05 }, nil, "slow-disk-wal", verdict.Fail, 0.05},
		{"CPU saturated", func(m *Member) { m.CPUSeconds = 19 }, nil, "cpu-saturated", verdict.Fail, 0.95},
		{"slow peer", func(m *Member) { m.PeerRTTP99["b"] = 0.4 }, nil, "peer-rtt", verdict.Fail, 0.4},
		{"heartbeat failures", func(m *Member) { m.HeartbeatFailures = 3 }, nil, "heartbeat-failures", verdict.Fail, 3},
		{"near quota", func(m *Member) { m.DBSize = 1.8 * (1 << 30) }, nil, "db-quota", verdict.Fail, 0.9},
		{"fragmented", func(m *Member) { m.DBSize, m.DBInUse = 1<<30, 200<<20 }, nil, "db-fragmentation", verdict.Warn, 200.0 / 1024},
		{"small fragmented db is fine", func(m *Member) { m.DBSize, m.DBInUse = 90<<20, 10<<20 }, nil, "", verdict.Pass, 0},
		{"compaction pauses", func(m *Member) { m.CompactionPauseP99 = 0.4 }, nil, "compaction-pauses", verdict.Warn, 0.4},
		{"defragmentation in the window", func(m *Member) { m.Defrags = 1 }, nil, "compaction-pauses", verdict.Warn, math.NaN()},
		{"no leader", func(m *Member) { m.HasLeader = 0 }, nil, "no-leader", verdict.Fail, 0},
		{"leader changes", func(m *Member) { m.LeaderChanges = 2 }, nil, "leader-changes", verdict.Fail, 2},
		{"gRPC errors", func(m *Member) { m.GRPCByCode["Unavailable"] = 50; m.GRPCByCode["NotFound"] = 500 }, nil, "grpc-errors", verdict.Warn, 50.0 / 1550},
		{"missing figures are no finding", func(m *Member) {
			m.WALFsync, m.BackendCommit, m.Apply = noData, noData, noData
			m.HasLeader, m.DBSize, m.CPUSeconds, m.SlowApplies = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		}, nil, "", verdict.Pass, 0},
		{"log slow fdatasync", func(*Member) {}, summaryOf(KindSlowFdatasync, 1500*time.Millisecond), "slow-disk-logs", verdict.Fail, 1},
		{"log slow apply", func(*Member) {}, summaryOf(KindSlowApply, 300*time.Millisecond), "slow-applies", verdict.Fail, 1},
		{"log: the election at start is no finding", func(*Member) {}, ParseLogs([]byte(startupElection)), "", verdict.Pass, 0},
		{"log: elections in two terms", func(*Member) {}, ParseLogs([]byte(startupElection + reElection)), "leader-changes", verdict.Fail, 2},
		{"log slow requests alone", func(*Member) {}, summaryOf(KindSlowRequest, 800*time.Millisecond), "slow-requests", verdict.Warn, 1},
		{"log space exceeded", func(*Member) {}, summaryOf(KindSpaceExceeded, 0), "db-quota", verdict.Fail, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := fine()
			tc.mod(&m)
			ev := Evidence{Members: []Member{m}, Window: 10 * time.Second, Logs: tc.logs}
			fs := Diagnose(ev, verdict.DiagnoseDefaults(), Rules())
			vs := Verdicts(ev, fs, Rules())
			if tc.top == "" {
				if len(fs) != 0 || len(vs) != 1 || vs[0].Check != "healthy" || vs[0].Status != verdict.Pass {
					t.Fatalf("want healthy, got %+v", vs)
				}
				return
			}
			if len(fs) == 0 {
				t.Fatalf("no finding, want %s", tc.top)
			}
			if got := fs[0].Facts; fs[0].Rule.ID != tc.top || fs[0].Status != tc.status || len(got) != 1 ||
				!(math.Abs(got[0].Value-tc.value) < 1e-12 || math.IsNaN(got[0].Value) && math.IsNaN(tc.value)) {
				t.Fatalf("top finding %s %s %+v, want %s %s of value %v", fs[0].Rule.ID, fs[0].Status, got, tc.top, tc.status, tc.value)
			}
			if f := fs[0]; f.Kind != f.Rule.Kind || len(f.Facts) != 1 || f.Facts[0].Name != f.Threshold.ID || !(f.Facts[0].Value == f.Value || math.IsNaN(f.Value)) {
				t.Fatalf("top finding's kind %q and facts %+v, want the rule's kind %q and the judged %s %v", f.Kind, f.Facts, f.Rule.Kind, f.Threshold.ID, f.Value)
			}
			if vs[0].Check != tc.top || vs[0].Source == "" || !strings.Contains(vs[0].Detail, "What to do") {
				t.Fatalf("verdict %+v", vs[0])
			}
		})
	}
}

func summaryOf(k Kind, took time.Duration) *LogSummary {
	s := newSummary()
	s.Lines = 1
	s.add(Event{Kind: k, Took: took, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Message: string(k), Line: "apply request took too long / database space exceeded"})
	return s
}

func TestRankingPutsCausesFirst(t *testing.T) {
	a, b := fine(), fine()
	b.Name = "member1"
	a.LeaderChanges = 3              // symptom, FAIL
	a.WALFsync.P99 = 0.02            // cause, FAIL
	b.WALFsync.P99 = 0.09            // worse cause
	b.GRPCByCode["Unavailable"] = 40 // WARN
	ev := Evidence{Members: []Member{a, b}, Window: 5 * time.Second}
	fs := Diagnose(ev, verdict.DiagnoseDefaults(), Rules())
	var got []string
	for _, f := range fs {
		got = append(got, f.Rule.ID+"/"+f.Member)
	}
	want := "slow-disk-wal/member1 slow-disk-wal/member0 leader-changes/member0 grpc-errors/member1"
	if strings.Join(got, " ") != want {
		t.Fatalf("ranking %v, want %s", got, want)
	}
}

func TestRulesAreDataWithSources(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if r.ID == "" || r.Title == "" || !r.Kind.Known() || r.Source == "" || r.Check == nil || seen[r.ID] {
			t.Errorf("rule %+v: needs a unique id, a title, a cause, a source and a check", r)
		}
		seen[r.ID] = true
	}
	th := verdict.DiagnoseDefaults()
	for _, x := range []verdict.Threshold{th.WALFsyncP99, th.BackendCommitP99, th.ApplyP99, th.PeerRTTP99, th.DBQuota, th.Fragmentation, th.GRPCErrors, th.CPUBusy} {
		if x.Source == "" || x.ID == "" || x.Limit <= 0 {
			t.Errorf("threshold %+v: needs an id, a limit and a source", x)
		}
	}
	if th.PeerRTTP99.Limit != 0.15 || th.WALFsyncP99.Limit != 0.01 || th.BackendCommitP99.Limit != 0.025 {
		t.Errorf("documented limits changed: %+v", th)
	}
}

const startupElection = `{"level":"info","ts":"2026-11-22T04:20:10.664Z","caller":"raft/raft.go:771","msg":"b5179d13d0285315 became leader at term 2"}
{"level":"info","ts":"2026-11-22T04:20:10.664Z","caller":"raft/node.go:327","msg":"raft.node: b5179d13d0285315 elected leader b5179d13d0285315 at term 2"}
`

const reElection = `raft2026/11/22 04:25:11 INFO: raft.node: 7520a73dc41cb177 lost leader b5179d13d0285315 at term 3
raft2026/11/22 04:25:12 INFO: raft.node: 7520a73dc41cb177 elected leader 7520a73dc41cb177 at term 3
`
