package cluster

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/finding"
	"etcdbench/internal/verdict"
)

// slowApply is etcd's --warning-apply-duration default: a range request
// that takes longer is counted in etcd_server_slow_apply_total (etcd
// server/etcdserver/util.go warnOfExpensiveReadOnlyRangeRequest, its
// clock started before a linearizable read waits for its ReadIndex).
const slowApply = 100 * time.Millisecond

// ownSlowApplies takes the report's own reads out of the members' slow
// applies: each read of its probe that took slowApply or longer, as its
// client saw it, may have been counted by the member, and a linearizable
// read at a follower of members 50 ms apart takes about 110 ms with an
// idle CPU. It returns a note for each member whose count it lowered.
func ownSlowApplies(ev *diagnose.Evidence, idx []int, probes []*probe, labels []string) []string {
	var notes []string
	for k := range ev.Members {
		m := &ev.Members[k]
		own := float64(probes[idx[k]].ownSlow)
		if own == 0 || math.IsNaN(m.SlowApplies) {
			continue
		}
		was := m.SlowApplies
		m.SlowApplies = max(0, was-own)
		notes = append(notes, fmt.Sprintf("%s: etcd counted %.0f slow applies in the window; %.0f of this report's own reads took over %v (the member counts such a range request as a slow apply), so %.0f are judged",
			labels[idx[k]], was, own, slowApply, m.SlowApplies))
	}
	return notes
}

// peerRTTs fills v.rtt, each member's round trip p99 to each peer by
// peer ID, from etcd's own prober histogram over the window.
func (v *view) peerRTTs(ev diagnose.Evidence, idx []int) {
	v.rtt = make([]map[uint64]float64, len(v.probes))
	for k, m := range ev.Members {
		for peer, p99 := range m.PeerRTTP99 {
			id, err := strconv.ParseUint(peer, 16, 64)
			if err != nil || math.IsNaN(p99) || m.PeerRTTCount[peer] == 0 {
				continue
			}
			if v.rtt[idx[k]] == nil {
				v.rtt[idx[k]] = map[uint64]float64{}
			}
			v.rtt[idx[k]][id] = p99
		}
	}
}

// index is the place of the member whose ID is id among the probes (-1:
// none answered as it).
func (v *view) index(id uint64) int {
	for i, p := range v.probes {
		if p.status != nil && p.status.Header.MemberId == id {
			return i
		}
	}
	return -1
}

// quorumRTT is the round trip a leader at i waits for a quorum's answer:
// its round trip to the nearest voters that, with it, make a majority
// (NaN when its round trips are not known).
func (v *view) quorumRTT(i int) float64 {
	self := v.probes[i].status.Header.MemberId
	var rtts []float64
	for id := range v.voters {
		if id == self {
			continue
		}
		r, ok := v.rtt[i][id]
		if !ok {
			return math.NaN()
		}
		rtts = append(rtts, r)
	}
	need := len(v.voters)/2 + 1 - 1 // the others a majority needs besides the leader
	if need <= 0 || len(rtts) < need {
		return math.NaN()
	}
	slices.Sort(rtts)
	return rtts[need-1]
}

// readWait is what the network alone makes a linearizable read at member
// i wait, by the members' round trips (etcd's prober): at the leader its
// quorum's round trip (ReadIndex confirms its leadership with a
// heartbeat), at a follower its round trip to the leader and the
// leader's quorum's (NaN when they are not known).
func (v *view) readWait(i int) float64 {
	p := v.probes[i]
	if p.status == nil {
		return math.NaN()
	}
	leader := v.index(p.status.Leader)
	if leader < 0 {
		return math.NaN()
	}
	q := v.quorumRTT(leader)
	if leader == i {
		return q
	}
	toLeader, ok := v.rtt[i][p.status.Leader]
	if !ok {
		return math.NaN()
	}
	if math.IsNaN(q) {
		q = toLeader // the leader's own view unknown: as far as this link
	}
	return toLeader + q
}

// networkReads says whether the network explains member i's slow
// linearizable reads, and with what figures: their median wait over the
// serializable reads' (what a read waits beyond serving itself) is at
// least half their p99 (a steady wait, not a busy member's tail), and,
// where etcd's prober measured the round trips, their p99 is within
// what the round trips (readWait) give, with half again for the
// prober's smoothing and the proxies' or kernel's queues.
func (v *view) networkReads(i int) (explained bool, wait, expected float64) {
	p := v.probes[i]
	if p.linearizable == nil || p.serializable == nil || p.linearizable.TotalCount() == 0 || p.serializable.TotalCount() == 0 {
		return false, math.NaN(), math.NaN()
	}
	lin50 := time.Duration(p.linearizable.ValueAtQuantile(50)).Seconds()
	ser50 := time.Duration(p.serializable.ValueAtQuantile(50)).Seconds()
	lin99, ser99 := p99(p, true), p99(p, false)
	wait, expected = lin50-ser50, v.readWait(i)
	steady := wait > 0 && wait >= 0.5*lin99
	if math.IsNaN(expected) {
		return steady, wait, expected
	}
	return steady && lin99 <= 1.5*expected+ser99+0.005 && wait >= 0.5*expected, wait, expected
}

// worstRTT is the largest round trip between the leader and a member,
// and where it comes from. The reads measure it best: the leader's
// linearizable reads wait a steady time over its serializable ones,
// its quorum's round trip, and a follower's the same plus its own round
// trip to the leader. Without them it is etcd's prober's p99 over the
// window, whose histogram buckets double (0.1 ms, 0.2 ms ... 51.2 ms,
// 102.4 ms): a round trip of 52 ms reads up to 102 ms there.
func (v *view) worstRTT() (rtt float64, from string) {
	rtt = math.NaN()
	leader := -1
	for _, i := range v.answered() {
		if p := v.probes[i]; p.status != nil && p.status.Leader == p.status.Header.MemberId {
			leader = i
		}
	}
	if leader >= 0 {
		if _, lw, _ := v.networkReads(leader); lw > 0 {
			rtt, from = lw, "the leader's linearizable reads' wait over its serializable ones: its quorum's round trip"
			for _, i := range v.answered() {
				if i == leader {
					continue
				}
				if ok, w, _ := v.networkReads(i); ok && w-lw > rtt {
					rtt, from = w-lw, "a follower's linearizable reads' wait beyond the leader's: its round trip to the leader"
				}
			}
			return rtt, from
		}
	}
	for _, m := range v.rtt {
		for _, r := range m {
			if math.IsNaN(rtt) || r > rtt {
				rtt, from = r, "etcd_network_peer_round_trip_time_seconds p99, whose buckets double: an upper bound"
			}
		}
	}
	return rtt, from
}

// timeoutAdvice is the flags to set for the worst round trip.
func (v *view) timeoutAdvice() string {
	rtt, from := v.worstRTT()
	if math.IsNaN(rtt) {
		return ""
	}
	hb, et := verdict.Timeouts(time.Duration(rtt * float64(time.Second)))
	words := fmt.Sprintf("for a round trip of %s between members (%s), run them with --heartbeat-interval %d --election-timeout %d (%s)",
		secs(rtt), from, hb.Milliseconds(), et.Milliseconds(), verdict.TimeoutsSource)
	if hb == 100*time.Millisecond && et == time.Second {
		words += ": etcd's defaults"
	}
	return words
}

var networkReadTh = verdict.Threshold{ID: "linearizable_read_p99", Title: "linearizable read p99", Unit: "s",
	Source: "etcd: a linearizable read waits for a ReadIndex from the leader (raft thesis 6.4), one round trip to the leader and the leader's to its quorum more than a serializable read"}

// checkNetworkReads names the network where it explains a member's slow
// linearizable reads (networkReads), with the timeouts for its round
// trip: a WARN, the cluster being as fast as its network lets it.
func checkNetworkReads(v *view, th Thresholds) []diagnose.Finding {
	var out []diagnose.Finding
	for _, i := range v.answered() {
		p := v.probes[i]
		lin := p99(p, true)
		if !(lin >= th.ReadP99.Limit) {
			continue
		}
		ok, wait, expected := v.networkReads(i)
		if !ok {
			continue
		}
		t := networkReadTh
		t.Limit = th.ReadP99.Limit
		by := "etcd's prober saw no round trip in the window (it observes one every 30 s per peer)"
		if !math.IsNaN(expected) {
			by = fmt.Sprintf("the members' round trips give %s (etcd's prober)", secs(expected))
		}
		role := "a follower's waits for its round trip to the leader and the leader's to its quorum"
		if p.status.Leader == p.status.Header.MemberId {
			role = "the leader's waits for its quorum's round trip"
		}
		out = append(out, diagnose.Finding{
			Member: v.labels[i], Status: verdict.Warn, Threshold: t, Value: lin,
			Evidence: fmt.Sprintf("linearizable read p99 %s at %s, p50 %s over the serializable reads' (p99 %s): a steady wait, as %s (ReadIndex); %s",
				secs(lin), v.labels[i], secs(wait), secs(p99(p, false)), role, by),
			Advice: "the network between members, not this member, sets these reads: read serializably where a stale read will do, keep the clients that need linearizable reads near the leader (etcdctl move-leader), or bring the members closer; " + v.timeoutAdvice(),
		})
	}
	return out
}

// networkApplies names the network in the slow-applies findings of
// members whose linearizable reads wait for the round trips
// (networkReads) about as long as etcd's --warning-apply-duration or
// more: etcd counts such a read as a slow apply with an idle CPU, so the
// count there is no sign of CPU starvation (the report's own reads were
// already taken out: ownSlowApplies).
func (v *view) networkApplies(fs []diagnose.Finding) {
	for k := range fs {
		f := &fs[k]
		if f.Rule == nil || f.Rule.ID != "slow-applies" {
			continue
		}
		i := slices.Index(v.labels, f.Member)
		if i < 0 {
			continue
		}
		ok, wait, _ := v.networkReads(i)
		if !ok || wait < 0.8*slowApply.Seconds() {
			continue
		}
		f.Kind, f.Status = finding.Network, verdict.Warn
		f.Evidence += fmt.Sprintf("; but a linearizable read at %s waits %s for the round trips to the leader (ReadIndex), near or over etcd's %v --warning-apply-duration: clients' linearizable reads there count as slow applies with an idle CPU", v.labels[i], secs(wait), slowApply)
		f.Advice = "the network between members, not the CPU: read serializably where a stale read will do, or keep clients that need linearizable reads near the leader; " + v.timeoutAdvice()
	}
}

// leaderPlaceTh is how much lower another member's quorum round trip
// must be than the leader's for a move to be worth naming.
var leaderPlaceTh = verdict.Threshold{ID: "leader_quorum_rtt", Title: "the leader's quorum round trip", Unit: "s", Limit: 0.5,
	Source: "etcd: a put waits for the leader's quorum (raft); etcdctl move-leader hands leadership to another member; etcd's prober histogram doubles its buckets, so only a member at half the leader's quorum round trip or less is named"}

// checkLeaderPlace names a better place for the leader: a member whose
// quorum round trip (etcd's prober, over the window) is at most half
// the leader's, and what each put would save there.
func checkLeaderPlace(v *view, _ Thresholds) []diagnose.Finding {
	leader := -1
	for _, i := range v.answered() {
		if p := v.probes[i]; p.status != nil && p.status.Leader == p.status.Header.MemberId {
			leader = i
		}
	}
	if leader < 0 {
		return nil
	}
	here := v.quorumRTT(leader)
	best, at := here, -1
	for _, i := range v.answered() {
		if i == leader || !v.voters[v.probes[i].status.Header.MemberId] {
			continue
		}
		if q := v.quorumRTT(i); q < best {
			best, at = q, i
		}
	}
	if math.IsNaN(here) || at < 0 || !(best <= leaderPlaceTh.Limit*here) {
		return nil
	}
	return []diagnose.Finding{{
		Member: v.labels[leader], Status: verdict.Warn, Threshold: leaderPlaceTh, Value: best / here,
		Evidence: fmt.Sprintf("the leader %s waits %s for its quorum's round trip (etcd's prober p99), %s would wait %s: every put and linearizable read would save about %s there",
			v.labels[leader], secs(here), v.labels[at], secs(best), secs(here-best)),
		Advice: fmt.Sprintf("move the leader: etcdctl move-leader %x (a member in a far zone is best kept a follower)", v.probes[at].status.Header.MemberId),
	}}
}
