package cluster

import (
	"strings"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

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
