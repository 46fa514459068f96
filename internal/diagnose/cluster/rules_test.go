package cluster

import (
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/diagnose/data/memory"
	"etcdbench/internal/finding"
	"etcdbench/internal/stats"
	"etcdbench/internal/verdict"
)

// member is a probe of a member that answered, as its answers read.
func member(id, cluster, leader uint64, version string, ids ...uint64) *probe {
	p := &probe{
		endpoint: "http://127.0.0.1:" + string(rune('0'+id)),
		version:  serverVersion{Server: version},
		status: &clientv3.StatusResponse{Header: &pb.ResponseHeader{MemberId: id, ClusterId: cluster},
			Leader: leader, RaftIndex: 100, RaftAppliedIndex: 100},
		hash: &clientv3.HashKVResponse{Hash: 7, HashRevision: 50, CompactRevision: 1},
	}
	for _, m := range ids {
		p.members = append(p.members, &pb.Member{ID: m, Name: "m" + string(rune('0'+m)), ClientURLs: []string{"http://127.0.0.1:" + string(rune('0'+m))}})
	}
	return p
}

// healthy is three members that agree on everything.
func healthy() []*probe {
	return []*probe{member(1, 9, 1, "3.5.17", 1, 2, 3), member(2, 9, 1, "3.5.17", 1, 2, 3), member(3, 9, 1, "3.5.17", 1, 2, 3)}
}

// The rules of what the members say together, over hand-built answers:
// each names what differs, and a healthy cluster gives none.
func TestRulesOfAgreement(t *testing.T) {
	rule := func(id string) *Rule {
		for _, r := range Rules() {
			if r.ID == id {
				return r
			}
		}
		t.Fatalf("no rule %s", id)
		return nil
	}
	for _, tc := range []struct {
		rule   string
		change func([]*probe)
		status verdict.Status
		words  string
	}{
		{"hash-mismatch", func(ps []*probe) { ps[2].hash.Hash = 8 }, verdict.Fail, "differs: m1 (http://127.0.0.1:1), m2 (http://127.0.0.1:2): 00000007; m3 (http://127.0.0.1:3): 00000008"},
		{"cluster-ids-differ", func(ps []*probe) { ps[1].status.Header.ClusterId = 10 }, verdict.Fail, "2 different cluster IDs"},
		{"member-lists-differ", func(ps []*probe) { ps[0].members = ps[0].members[:2] }, verdict.Fail, "2 different member lists"},
		{"version-skew", func(ps []*probe) { ps[1].version.Server = "3.6.4" }, verdict.Warn, "mixed versions: m1 (http://127.0.0.1:1) 3.5"},
		{"version-skew", func(ps []*probe) { ps[1].version.Server = "3.7.0" }, verdict.Fail, "3.7"},
		{"alarm-corrupt", func(ps []*probe) {
			ps[0].alarms = []*pb.AlarmMember{{MemberID: 3, Alarm: pb.AlarmType_CORRUPT}}
		}, verdict.Fail, "m3 (http://127.0.0.1:3) raised the CORRUPT alarm"},
		{"leader-disagreement", func(ps []*probe) { ps[2].status.Leader = 2 }, verdict.Fail, "2 different leaders"},
	} {
		t.Run(tc.rule+" "+tc.words, func(t *testing.T) {
			r := rule(tc.rule)
			if fs := r.check(newView(healthy()), DefaultThresholds()); len(fs) != 0 {
				t.Fatalf("healthy: %+v", fs)
			}
			ps := healthy()
			tc.change(ps)
			fs := r.check(newView(ps), DefaultThresholds())
			if len(fs) != 1 || fs[0].Status != tc.status || !strings.Contains(fs[0].Evidence, tc.words) || fs[0].Advice == "" {
				t.Fatalf("findings %+v: want one %s saying %q, with advice", fs, tc.status, tc.words)
			}
		})
	}
}

// reads gives p n reads of each consistency: linearizable ones of lin,
// serializable ones of ser.
func reads(p *probe, lin, ser time.Duration, n int) *probe {
	p.linearizable, p.serializable = stats.NewLatencyHistogram(), stats.NewLatencyHistogram()
	for range n {
		stats.Record(p.linearizable, lin)
		stats.Record(p.serializable, ser)
	}
	return p
}

// Members 50 ms apart (etcd's prober): a follower's linearizable reads
// of 105 ms are the network's (a round trip to the leader and the
// leader's to its quorum), named so with the timeouts; a follower whose
// reads wait far beyond what the round trips give is a slow member.
func TestNetworkReads(t *testing.T) {
	ps := healthy()
	reads(ps[0], 52*time.Millisecond, time.Millisecond, 20)  // the leader
	reads(ps[1], 105*time.Millisecond, time.Millisecond, 20) // a follower: the network
	reads(ps[2], 400*time.Millisecond, time.Millisecond, 20) // a follower, busy
	v := newView(ps)
	v.rtt = []map[uint64]float64{{2: 0.051, 3: 0.050}, {1: 0.051, 3: 0.050}, {1: 0.050, 2: 0.050}}
	if w := v.readWait(1); w < 0.100 || w > 0.102 {
		t.Errorf("a follower's read wait %v, want its round trip to the leader and the leader's quorum's (0.101)", w)
	}
	if w := v.readWait(0); w != 0.050 {
		t.Errorf("the leader's read wait %v, want its nearest voter's round trip (0.050)", w)
	}
	th := DefaultThresholds()
	net, slow := checkNetworkReads(v, th), checkReads(v, th)
	if len(net) != 1 || net[0].Member != v.labels[1] || net[0].Status != verdict.Warn || !strings.Contains(net[0].Advice, "--heartbeat-interval 100 --election-timeout 1000") {
		t.Errorf("network findings %+v: want one WARN at the follower 50 ms apart, with etcd's default timeouts", net)
	}
	if len(slow) != 1 || slow[0].Member != v.labels[2] {
		t.Errorf("slow-read findings %+v: want one, at the busy follower", slow)
	}
}

// A follower 50 ms apart whose clients' linearizable reads raise its
// slow applies: the network's finding, not the CPU's.
func TestNetworkApplies(t *testing.T) {
	ps := healthy()
	reads(ps[0], 52*time.Millisecond, time.Millisecond, 20)
	reads(ps[1], 105*time.Millisecond, time.Millisecond, 20)
	reads(ps[2], 2*time.Millisecond, time.Millisecond, 20)
	v := newView(ps)
	v.rtt = []map[uint64]float64{{2: 0.051, 3: 0.050}, {1: 0.051, 3: 0.050}, {1: 0.050, 2: 0.050}}
	rule := &diagnose.Rule{ID: "slow-applies", Kind: finding.CPU}
	fs := []diagnose.Finding{
		{Finding: finding.Finding{Kind: finding.CPU}, Rule: rule, Member: v.labels[1], Status: verdict.Fail},
		{Finding: finding.Finding{Kind: finding.CPU}, Rule: rule, Member: v.labels[2], Status: verdict.Fail},
	}
	v.networkApplies(fs)
	if fs[0].Kind != finding.Network || fs[0].Status != verdict.Warn || !strings.Contains(fs[0].Evidence, "ReadIndex") {
		t.Errorf("the far follower's slow applies: %+v, want the network's WARN", fs[0])
	}
	if fs[1].Kind != finding.CPU || fs[1].Status != verdict.Fail {
		t.Errorf("a near member's slow applies: %+v, want the CPU's FAIL kept", fs[1])
	}
}

// The leader far from its quorum (members 1 and 2 are 2 ms apart, member
// 3 is 40 ms from both) is named with the member to move it to; a leader
// among the near members is not.
func TestLeaderPlace(t *testing.T) {
	far := func(leader uint64) *view {
		ps := []*probe{member(1, 9, leader, "3.5.17", 1, 2, 3), member(2, 9, leader, "3.5.17", 1, 2, 3), member(3, 9, leader, "3.5.17", 1, 2, 3)}
		v := newView(ps)
		v.rtt = []map[uint64]float64{{2: 0.002, 3: 0.040}, {1: 0.002, 3: 0.040}, {1: 0.040, 2: 0.040}}
		return v
	}
	fs := checkLeaderPlace(far(3), DefaultThresholds())
	if len(fs) != 1 || fs[0].Status != verdict.Warn || !strings.Contains(fs[0].Advice, "move-leader 1") || !strings.Contains(fs[0].Evidence, "save") {
		t.Errorf("a far leader: %+v, want one WARN naming member 1", fs)
	}
	if fs := checkLeaderPlace(far(1), DefaultThresholds()); len(fs) != 0 {
		t.Errorf("a near leader: %+v, want none", fs)
	}
}

// The timeouts a member runs with against the recommendation for the
// worst round trip: a WARN with the flags to set for a member whose
// election timeout is under ten round trips or whose heartbeat is under
// one; none for etcd's defaults at 40 ms, or where they are not known.
func TestTimeoutsRule(t *testing.T) {
	ps := []*probe{member(1, 9, 1, "3.5.17", 1, 2, 3), member(2, 9, 1, "3.5.17", 1, 2, 3), member(3, 9, 1, "3.5.17", 1, 2, 3)}
	v := newView(ps)
	v.rtt = []map[uint64]float64{{2: 0.2, 3: 0.2}, {1: 0.2, 3: 0.2}, {1: 0.2, 2: 0.2}}
	v.timeouts = []*timeouts{{heartbeat: 100 * time.Millisecond, election: time.Second, from: "etcd's defaults"}, nil,
		{heartbeat: 300 * time.Millisecond, election: 3 * time.Second, from: "its command line"}}
	fs := checkTimeouts(v, DefaultThresholds())
	if len(fs) != 1 || fs[0].Status != verdict.Warn || !strings.Contains(fs[0].Advice, "--heartbeat-interval 200 --election-timeout 2000") || !strings.Contains(fs[0].Evidence, "etcd's defaults") {
		t.Fatalf("members 200ms apart, one at etcd's defaults: %+v, want one WARN with 200/2000", fs)
	}
	v.rtt = []map[uint64]float64{{2: 0.04, 3: 0.04}, {1: 0.04, 3: 0.04}, {1: 0.04, 2: 0.04}}
	if fs := checkTimeouts(v, DefaultThresholds()); len(fs) != 0 {
		t.Errorf("members 40ms apart at etcd's defaults: %+v, want none", fs)
	}
}

// A member at or over 80 % of its limit is near it; one under it, or
// whose limit is not known, is not.
func TestCheckMemory(t *testing.T) {
	v := &view{labels: []string{"a", "b", "c", "d"}, memory: []*memberMemory{
		{resident: 900 << 20, limit: memory.Limit{Bytes: 1 << 30, From: "cgroup v1"}},
		{resident: 100 << 20, limit: memory.Limit{Bytes: 1 << 30, From: "cgroup v1"}},
		{resident: 900 << 20},
		nil,
	}}
	fs := checkMemory(v, DefaultThresholds())
	if len(fs) != 1 || fs[0].Member != "a" || fs[0].Status != verdict.Warn || !strings.Contains(fs[0].Evidence, "88 %") {
		t.Errorf("findings %+v: want one WARN for a at 88 %% of its limit", fs)
	}
}
