package capacity

import (
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// The network's bound is the highest rate whose check perf clients (50
// up to 150 puts/s, 200 up to 1,000, 500 up to 8,000, then 1,000), each
// waiting for its put, send it.
func TestNetworkBound(t *testing.T) {
	for _, c := range []struct {
		wait    time.Duration
		rate    float64
		clients int
	}{
		{100 * time.Millisecond, 10000, 1000}, // xl's 1,000 / 0.1 s, above l's 8,000
		{250 * time.Millisecond, 2000, 500},   // l's 500 / 0.25 s
		{400 * time.Millisecond, 1250, 500},   // l's, just above m's 1,000
		{499 * time.Millisecond, 1002, 500},   // l's, just above m's top
		{500 * time.Millisecond, 400, 200},    // l's 1,000 is m's top, with m's 200: 200 / 0.5 s
		{20 * time.Millisecond, 50000, 1000},  // above xl's rate, xl's clients
		{600 * time.Millisecond, 0, 50},       // over check perf's slowest request
		{0, math.Inf(1), 1000},                // no wait: no bound
	} {
		got, clients := NetworkBound(c.wait)
		same := math.Abs(got-c.rate) <= 0.001*c.rate || got == c.rate
		if !same || clients != c.clients {
			t.Errorf("NetworkBound(%v) = %.1f with %d clients, want %.1f with %d", c.wait, got, clients, c.rate, c.clients)
		}
	}
}

// sweepOf is a sweep that passed rates with put p50 p50 (and p99 twice
// it) up to its answer, and failed upper.
func sweepOf(rate, upper float64, p50 time.Duration, bend finding.Kind) *result.Capacity {
	c := &result.Capacity{Rate: rate, Upper: upper, Bend: bend}
	for r := 150.0; r <= rate; r *= 2 {
		c.Steps = append(c.Steps, result.CapacityStep{Phase: "ladder", Rate: r, Status: verdict.Pass, CommitP50Ns: int64(p50 / 2), CommitP99Ns: int64(p50)})
	}
	c.Steps = append(c.Steps, result.CapacityStep{Phase: "bisect", Rate: rate, Status: verdict.Pass, CommitP50Ns: int64(p50), CommitP99Ns: int64(2 * p50)})
	if upper > 0 {
		c.Steps = append(c.Steps, result.CapacityStep{Phase: "bisect", Rate: upper, Status: verdict.Fail, CommitP50Ns: int64(10 * p50), CommitP99Ns: int64(20 * p50)})
		c.Steps = append(c.Steps, result.CapacityStep{Phase: "probe", Rate: 2 * upper, Status: verdict.Pass, CommitP50Ns: 1})
	}
	return c
}

// A row's latency is its answer's step's, not the probe's or a failed
// step's; the prediction is the single member's answer until the round
// trips each put waits bound check perf's clients below it, and then
// the network's, with the arithmetic.
func TestClusterRowAndMachines(t *testing.T) {
	apart := etcdcluster.Options{Members: 3, PeerRTT: 50 * time.Millisecond}
	c := sweepOf(600, 660, 60*time.Millisecond, finding.Disk)
	row := ClusterRow(c, apart, c.Rate, c.Upper, c.Bend)
	if row.RequestP50Ns != int64(60*time.Millisecond) || row.RequestP99Ns != int64(120*time.Millisecond) || row.Clients != 200 || row.PeerRTTNs != int64(50*time.Millisecond) {
		t.Errorf("row %+v: want the 600 puts/s step's p50 60ms, p99 120ms, m's 200 clients", row)
	}
	if !strings.Contains(row.Evidence, "shared this machine's disk and CPUs") || !strings.Contains(row.Evidence, "50ms apart") ||
		!strings.Contains(row.Evidence, "want --heartbeat-interval 100 --election-timeout 1000") {
		t.Errorf("row's evidence: %s", row.Evidence)
	}

	one := sweepOf(3000, 3300, 2*time.Millisecond, finding.Disk)
	// Far apart: 500 clients each waiting 2 ms + 5/3 x 240 ms = 402 ms send
	// 1,244 puts/s, below the single member's 3,000.
	far := etcdcluster.Options{Members: 3, PeerRTT: 240 * time.Millisecond}
	m := Machines(far, one, one.Rate, one.Upper, one.Bend, "the test's")
	if m == nil || m.LimitedBy != finding.Network || math.Abs(m.Rate-500/0.402) > 1 || m.Upper != m.Rate || m.OneMember != 3000 {
		t.Fatalf("members 240ms apart: %+v, want the network's bound 1244", m)
	}
	for _, w := range []string{"predicted, not measured", "400ms on average", "400ms + 2ms = 402ms", "500 / 402ms = 1244", "the round trip's bound", "carry up to 1244 puts/s"} {
		if !strings.Contains(m.Evidence, w) {
			t.Errorf("prediction's evidence lacks %q: %s", w, m.Evidence)
		}
	}
	// Near: the single member's answer stands.
	near := etcdcluster.Options{Members: 3, PeerRTT: 2 * time.Millisecond}
	if m := Machines(near, one, one.Rate, one.Upper, one.Bend, "the test's"); m == nil || m.Rate != 3000 || m.Upper != 3300 || m.LimitedBy != finding.Disk {
		t.Errorf("members 2ms apart: %+v, want the single member's 3000-3300, disk", m)
	}
	// Between the answer and its failure, the bound is the upper end.
	mid := etcdcluster.Options{Members: 3, PeerRTT: 96 * time.Millisecond}
	if m := Machines(mid, one, one.Rate, one.Upper, one.Bend, "the test's"); m == nil || m.Rate != 3000 || math.Abs(m.Upper-500/0.162) > 1 {
		t.Errorf("members 96ms apart: %+v, want 3000 up to the bound 3086", m)
	}
	// Too far for check perf's slowest request.
	// A far member (m3 90 ms from the others, 2 ms between the two near
	// ones): the leader near, its quorum 2 ms; puts at member 1 wait
	// 2 ms more, at member 3 90 ms more: 2 + (2 + 90) / 3 ms on average.
	zone := etcdcluster.Options{Members: 3, PeerRTT: 2 * time.Millisecond, MemberRTT: []time.Duration{0, 0, 90 * time.Millisecond}}
	if q, w := networkWait(zone); q != 2*time.Millisecond || w != 2*time.Millisecond+92*time.Millisecond/3 {
		t.Errorf("a far member: quorum %v, mean wait %v; want 2ms and %v", q, w, 2*time.Millisecond+92*time.Millisecond/3)
	}
	if q, w := networkWait(etcdcluster.Options{Members: 3, PeerRTT: 30 * time.Millisecond}); q != 30*time.Millisecond || w != 50*time.Millisecond {
		t.Errorf("30ms apart: quorum %v, mean wait %v; want 30ms and 5/3 of it", q, w)
	}
	if m := Machines(etcdcluster.Options{Members: 3, PeerRTT: 400 * time.Millisecond}, one, one.Rate, one.Upper, one.Bend, "the test's"); m == nil || m.Rate != 0 || !strings.Contains(m.Evidence, "no rate passes") {
		t.Errorf("members 400ms apart: %+v, want nothing carried", m)
	}
	if m := Machines(far, &result.Capacity{}, 0, 150, finding.Disk, "the test's"); m != nil {
		t.Errorf("a single member that passed nothing: %+v, want no prediction", m)
	}
}
