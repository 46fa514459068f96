package main

import (
	"math"
	"strings"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"etcdbench/internal/result"
)

const mb = 1 << 20

// pred is a prediction of a resource of 100 MiB in 1,000 objects, from
// an idle member of 200 MiB.
func pred() prediction {
	return prediction{Resource: "configmaps", Prefix: "/registry/configmaps/", Keys: 1000, Bytes: 100 * mb, DBBytes: 110 * mb,
		Memory: result.DataMemory{IdleBytes: 200 * mb, PerListedByte: 2, PerListedByteConcurrent: 1.5, PagedPerListedByte: 3}}
}

func TestPredictionPeak(t *testing.T) {
	p := pred()
	for _, c := range []struct {
		c    listCase
		want float64 // MiB
	}{
		{listCase{K: 1}, 200 + 2*100},
		{listCase{K: 4}, 200 + 4*1.5*100},
		{listCase{K: 1, Paged: false}, 400},
		{listCase{K: 4, Paged: true}, 200 + 4*3*100*500/1000.0}, // a page is half the resource
	} {
		if got := p.peak(c.c) / mb; math.Abs(got-c.want) > 1e-9 {
			t.Errorf("peak(%s) = %v MiB, want %v", c.c, got, c.want)
		}
	}
	// Concurrent LISTs never cost less than one.
	p.Memory.PerListedByteConcurrent = 0.2
	if got := p.over(listCase{K: 4}) / mb; got != 200 {
		t.Errorf("over(4 full) with a small concurrent factor = %v MiB, want one LIST's 200", got)
	}
	// A resource of fewer objects than a page is one page.
	p.Keys = 100
	if got := p.over(listCase{K: 2, Paged: true}) / mb; got != 2*3*100 {
		t.Errorf("over(2 paginated) of 100 objects = %v MiB, want 600", got)
	}
}

func TestRender(t *testing.T) {
	ob := func(round int, peak1, peak4 int64) observation {
		return observation{Round: round, Etcd: "etcd 3.4 (Debian)", Target: "100.0 MiB", Predicted: pred(), Cases: []caseResult{
			{listCase: listCase{K: 1}, Idle: status{RSS: 200 * mb}, Peak: status{RSS: peak1}},
			{listCase: listCase{K: 4}, Idle: status{RSS: 250 * mb}, Peak: status{RSS: peak4}},
			{listCase: listCase{K: 8}, Skipped: "too large"},
		}}
	}
	// Truth for one full LIST 400, 500, 320 MiB against 400 predicted:
	// ratios 1, 0.8, 1.25; for four, 800 MiB each round against 800.
	obs := []observation{ob(1, 400*mb, 800*mb), ob(2, 500*mb, 800*mb), ob(3, 320*mb, 800*mb)}
	ooms := []oomCheck{{Etcd: "etcd 3.4 (Debian)", Target: "100.0 MiB", LimitBytes: 500 * mb, ReadLimit: 500 * mb, ReadFrom: "cgroup v1 memory.limit_in_bytes (/x)",
		Lists: 2.5, MaxK: 10, OOMK: 3, Predicted: prediction{Memory: result.DataMemory{IdleBytes: 200 * mb, ConcurrentFullLists: 2}},
		Steps: []caseResult{{listCase: listCase{K: 1}, Peak: status{RSS: 300 * mb}}, {listCase: listCase{K: 2}, Peak: status{RSS: 400 * mb}},
			{listCase: listCase{K: 3}, Peak: status{RSS: 490 * mb}, Killed: "killed", OOMKills: 1}}}}
	table, figs := render(obs, ooms)
	for name, want := range map[string]float64{
		"etcd_3_4_debian_100_0_mib_1_full_ratio":           1,
		"etcd_3_4_debian_100_0_mib_1_full_ratio_min":       0.8,
		"etcd_3_4_debian_100_0_mib_1_full_ratio_max":       1.25,
		"etcd_3_4_debian_100_0_mib_1_full_truth_mib":       400,
		"etcd_3_4_debian_100_0_mib_1_full_predicted_mib":   400,
		"etcd_3_4_debian_100_0_mib_1_full_over_idle_ratio": 1, // 200 predicted over 200, 300, 120
		"etcd_3_4_debian_100_0_mib_4_full_ratio":           1,
		"etcd_3_4_debian_100_0_mib_4_full_over_idle_ratio": 600.0 / 550,
		"within":                          2,
		"compared":                        2, // 8 full was skipped every round
		"etcd_3_4_debian_100_0_mib_oom_k": 3,
		"etcd_3_4_debian_100_0_mib_oom_predicted_fit": 2,
		"oom_within": 1,
	} {
		if got, ok := figs[name]; !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("figure %s = %v (%v), want %v", name, got, ok, want)
		}
	}
	for _, want := range []string{
		"| 1 full | 400 (320-500) | 400 | 1.00 (0.80-1.25) | 200, 200 | 1.00 (0.67-1.67) | yes |",
		"| 8 full | (not measured) |",
		"| etcd 3.4 (Debian), db 100.0 MiB | 500 (the cgroup's) | 200 | 2 | 3 | 3 | yes | 1: 300 / 0; 2: 400 / 0; 3: 490 / 0 killed, oom_kill +1 |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}

func TestOOMMet(t *testing.T) {
	for _, c := range []struct {
		oomK, predicted, maxK int
		want                  bool
	}{
		{3, 2, 10, true}, {2, 2, 10, true}, {4, 2, 10, true}, {5, 2, 10, false}, {1, 2, 10, false},
		{0, 2, 10, false}, {0, 10, 10, true}, {0, 9, 10, false}, {1, 0, 10, true},
	} {
		if got := oomMet(c.oomK, c.predicted, c.maxK); got != c.want {
			t.Errorf("oomMet(%d, %d, %d) = %v, want %v", c.oomK, c.predicted, c.maxK, got, c.want)
		}
	}
}

func TestCountCodec(t *testing.T) {
	resp := &pb.RangeResponse{Header: &pb.ResponseHeader{Revision: 7}, More: true, Count: 9, Kvs: []*mvccpb.KeyValue{
		{Key: []byte("/registry/configmaps/a"), Value: []byte(strings.Repeat("x", 1000)), ModRevision: 3, Version: 1},
		{Key: []byte("/registry/configmaps/b"), Value: []byte(strings.Repeat("y", 70000)), ModRevision: 5, Lease: 4},
	}}
	b, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	// gRPC hands the codec a message in several buffers.
	data := mem.BufferSlice{mem.SliceBuffer(b[:100]), mem.SliceBuffer(b[100:40000]), mem.SliceBuffer(b[40000:])}
	var s rangeSummary
	if err := (countCodec{}).Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.kvs != 2 || s.bytes != 2*22+71000 || !s.more || string(s.lastKey) != "/registry/configmaps/b" {
		t.Errorf("read %+v (last key %q), want 2 objects, %d bytes, more, last key b", s, s.lastKey, 2*22+71000)
	}
	out, err := (countCodec{}).Marshal(&pb.RangeRequest{Key: []byte("a"), Limit: pageSize})
	if err != nil || out.Len() == 0 {
		t.Errorf("Marshal(RangeRequest) = %d bytes, %v", out.Len(), err)
	}
}

func TestParseStatus(t *testing.T) {
	st, err := parseStatus([]byte("Name:\tetcd\nVmRSS:\t  307200 kB\nRssAnon:\t  102400 kB\nRssFile:\t  204800 kB\n"))
	if err != nil || st != (status{RSS: 300 * mb, Anon: 100 * mb, File: 200 * mb}) {
		t.Errorf("parseStatus = %+v, %v", st, err)
	}
	if _, err := parseStatus([]byte("Name:\tx\n")); err == nil {
		t.Error("parseStatus without VmRSS: no error")
	}
	n, err := parseOOMKills([]byte("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"))
	if err != nil || n != 2 {
		t.Errorf("parseOOMKills = %d, %v, want 2", n, err)
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"--sizes", "100MB,400MB", "-k", "1,2", "--paged", "0"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.OOMSizes) != 1 || o.OOMSizes[0] != 100<<20 || len(o.cases()) != 2 {
		t.Errorf("parseFlags: OOM sizes %v, cases %v", o.OOMSizes, o.cases())
	}
	for _, bad := range [][]string{{"--oom-sizes", "1GB"}, {"-k", "0"}, {"--etcds", "k3s"}, {"--sizes", "1GB,100MB"}} {
		if _, err := parseFlags(bad, &strings.Builder{}); err == nil {
			t.Errorf("parseFlags(%q): no error", bad)
		}
	}
}

func TestLimitFor(t *testing.T) {
	p := pred() // idle 200 MiB, 100 MiB listed: one LIST alone adds 200, each of several 150
	if got := limitFor(p, 2.5); got != (200+375)*mb {
		t.Errorf("limitFor(2.5) = %d MiB, want 575", got/mb)
	}
	if got := limitFor(p, 1); got != (200+200)*mb {
		t.Errorf("limitFor(1) = %d MiB, want one LIST's 400", got/mb)
	}
}

func TestLimitRead(t *testing.T) {
	found := oomCheck{LimitBytes: 900 << 20, ReadLimit: 900 << 20, ReadFrom: "cgroup v1 memory.limit_in_bytes (/x)"}
	if got := limitRead(found); got != "the cgroup's" || !found.limitFound() {
		t.Errorf("the cgroup's limit read: %q", got)
	}
	missed := oomCheck{LimitBytes: 900 << 20, ReadLimit: 24105 << 20, ReadFrom: "the machine's MemTotal"}
	if got := limitRead(missed); got != "24105 MiB, the machine's MemTotal" || missed.limitFound() {
		t.Errorf("another limit read: %q", got)
	}
}
