package cluster

import (
	"etcdbench/internal/units"
	"fmt"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
)

// result is the typed report: every member as it answered and the
// findings in rank order.
func (v *view) result(fs []diagnose.Finding, timeout time.Duration) *result.Cluster {
	voters, up, need := v.quorum()
	c := &result.Cluster{Voters: voters, Answering: up, Quorum: need, TimeoutNs: int64(timeout),
		Members: []result.ClusterMember{}, Findings: []result.ClusterFinding{}}
	for i, p := range v.probes {
		c.Members = append(c.Members, v.member(i, p))
	}
	for i, f := range fs {
		cf := result.ClusterFinding{
			Rank: i + 1, Rule: f.Rule.ID, Kind: string(f.Kind), Status: f.Status.String(), Member: f.Member,
			Value: f.Value, Unit: f.Threshold.Unit, Limit: f.Threshold.Limit, Evidence: f.Evidence, Advice: f.Advice,
		}
		for j, l := range v.labels {
			if l == f.Member {
				cf.Endpoint = v.probes[j].endpoint
			}
		}
		c.Findings = append(c.Findings, cf)
	}
	return c
}

func (v *view) member(i int, p *probe) result.ClusterMember {
	m := result.ClusterMember{Name: strings.TrimSuffix(v.labels[i], " ("+p.endpoint+")"), Endpoint: p.endpoint,
		Answered: p.failure == "", Reason: p.reason, Version: p.version.Server}
	if st := p.status; st != nil {
		id := st.Header.MemberId
		m.ID, m.ClusterID = fmt.Sprintf("%x", id), fmt.Sprintf("%x", st.Header.ClusterId)
		if st.Version != "" {
			m.Version = st.Version
		}
		m.StorageVersion = st.StorageVersion
		if st.Leader != 0 {
			m.Leader = fmt.Sprintf("%x", st.Leader)
		}
		m.IsLeader, m.IsLearner = st.Leader == id, st.IsLearner
		m.RaftTerm, m.RaftIndex, m.RaftApplied, m.Lag = st.RaftTerm, st.RaftIndex, st.RaftAppliedIndex, v.lag(p)
		m.Revision, m.DBSize, m.DBInUse, m.Quota = st.Header.Revision, st.DbSize, st.DbSizeInUse, st.DbSizeQuota
		for _, a := range p.alarms {
			if a.MemberID == id {
				m.Alarms = append(m.Alarms, a.Alarm.String())
			}
		}
	}
	if v.quotas != nil && v.quotas[i] > 0 {
		m.Quota = v.quotas[i]
	}
	for _, mm := range p.members {
		m.Members = append(m.Members, memberWords(mm.Name, mm.ID, mm.IsLearner))
	}
	sort.Strings(m.Members)
	if p.hash != nil {
		m.HashKV, m.HashRevision, m.CompactRevision = p.hash.Hash, p.hash.HashRevision, p.hash.CompactRevision
	}
	m.SerializableRead, m.LinearizableRead = readLatency(p.serializable), readLatency(p.linearizable)
	if i < len(v.timeouts) && v.timeouts[i] != nil {
		t := v.timeouts[i]
		m.HeartbeatIntervalNs, m.ElectionTimeoutNs, m.TimeoutsFrom = t.heartbeat.Nanoseconds(), t.election.Nanoseconds(), t.from
	}
	if i < len(v.memory) && v.memory[i] != nil {
		mm := v.memory[i]
		m.ResidentBytes, m.MemoryLimitBytes, m.MemoryLimitFrom = mm.resident, mm.limit.Bytes, mm.limit.From
	}
	return m
}

func readLatency(h *hdr.Histogram) *result.ReadLatency {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	return &result.ReadLatency{Count: h.TotalCount(), P50Ns: h.ValueAtQuantile(50), P99Ns: h.ValueAtQuantile(99), MaxNs: h.Max()}
}

// figures are each member's status as figures, memberN_... as the
// metrics' (N its place among the endpoints).
func (v *view) figures() []result.Figure {
	var out []result.Figure
	add := func(name string, val float64, unit, desc string) {
		out = append(out, result.Figure{Name: name, Value: val, Unit: unit, Description: desc})
	}
	b := func(x bool) float64 {
		if x {
			return 1
		}
		return 0
	}
	voters, up, need := v.quorum()
	add("voters", float64(voters), "count", "voting members in the member lists")
	add("voters_answering", float64(up), "count", "voting members that answered")
	add("quorum", float64(need), "count", "voting members a majority needs")
	for i, p := range v.probes {
		pre := fmt.Sprintf("member%d_", i)
		add(pre+"answered", b(p.failure == ""), "count", "1 when "+v.labels[i]+" answered")
		st := p.status
		if st == nil {
			continue
		}
		add(pre+"is_leader", b(st.Leader == st.Header.MemberId), "count", "1 when it is the leader")
		add(pre+"is_learner", b(st.IsLearner), "count", "1 when it is a learner")
		add(pre+"raft_term", float64(st.RaftTerm), "count", "raft term")
		add(pre+"raft_index", float64(st.RaftIndex), "count", "raft committed index")
		add(pre+"raft_applied_index", float64(st.RaftAppliedIndex), "count", "raft applied index")
		add(pre+"raft_lag", float64(v.lag(p)), "count", "entries applied fewer than the leader committed")
		add(pre+"revision", float64(st.Header.Revision), "count", "store revision")
		add(pre+"alarms", float64(len(v.member(i, p).Alarms)), "count", "alarms raised on it")
		for _, r := range []struct {
			kind string
			h    *hdr.Histogram
		}{{"serializable", p.serializable}, {"linearizable", p.linearizable}} {
			if l := readLatency(r.h); l != nil {
				add(pre+"read_"+r.kind+"_p50", time.Duration(l.P50Ns).Seconds(), "s", r.kind+" read p50")
				add(pre+"read_"+r.kind+"_p99", time.Duration(l.P99Ns).Seconds(), "s", r.kind+" read p99")
			}
		}
	}
	return out
}

// latencies are the read series, one per member and consistency.
func (v *view) latencies() []result.Latency {
	var out []result.Latency
	for i, p := range v.probes {
		for _, r := range []struct {
			kind string
			h    *hdr.Histogram
		}{{"serializable", p.serializable}, {"linearizable", p.linearizable}} {
			if r.h == nil || r.h.TotalCount() == 0 {
				continue
			}
			enc, err := stats.Encode(r.h)
			if err != nil {
				continue
			}
			out = append(out, result.Latency{Name: fmt.Sprintf("member%d %s read", i, r.kind), Summary: stats.Summarize(r.h), Histogram: enc})
		}
	}
	return out
}

// notes say who each memberN is, what each member said in one line, and
// what could not be read.
func (v *view) notes(sc scrapes, idx []int) []string {
	var out []string
	for i, p := range v.probes {
		m := v.member(i, p)
		if !m.Answered {
			out = append(out, fmt.Sprintf("member%d = %s: did not answer: %s", i, v.labels[i], p.reason))
			continue
		}
		role := "follower"
		switch {
		case m.IsLeader:
			role = "leader"
		case m.IsLearner:
			role = "learner"
		}
		line := fmt.Sprintf("member%d = %s: etcd %s, ID %s, %s (leader %s), term %d, index %d, applied %d (lag %d), revision %d, db %d B (%d B in use)",
			i, v.labels[i], m.Version, m.ID, role, v.name(p.status.Leader), m.RaftTerm, m.RaftIndex, m.RaftApplied, m.Lag, m.Revision, m.DBSize, m.DBInUse)
		if m.StorageVersion != "" {
			line += ", storage " + m.StorageVersion
		}
		if m.Quota > 0 {
			line += fmt.Sprintf(", quota %d B", m.Quota)
		}
		if len(m.Alarms) > 0 {
			line += ", alarms " + strings.Join(m.Alarms, " ")
		}
		switch {
		case m.ResidentBytes > 0 && m.MemoryLimitBytes > 0:
			line += fmt.Sprintf(", resident %s of its %s memory limit (%s)", units.FormatBytes(m.ResidentBytes), units.FormatBytes(m.MemoryLimitBytes), m.MemoryLimitFrom)
		case m.ResidentBytes > 0:
			line += fmt.Sprintf(", resident %s (its memory limit not known: its process is not on this machine)", units.FormatBytes(m.ResidentBytes))
		}
		if m.ElectionTimeoutNs > 0 {
			line += fmt.Sprintf(", --heartbeat-interval %d --election-timeout %d (%s)", time.Duration(m.HeartbeatIntervalNs).Milliseconds(), time.Duration(m.ElectionTimeoutNs).Milliseconds(), m.TimeoutsFrom)
		} else {
			line += ", its timeouts not known (its process is not on this machine, and etcd's /metrics do not expose them)"
		}
		out = append(out, line)
		for _, n := range p.notes {
			out = append(out, v.labels[i]+": "+n)
		}
		if sc.errs[i] != nil {
			out = append(out, fmt.Sprintf("%s: its /metrics could not be read (%v): the metrics rules left it out", v.labels[i], sc.errs[i]))
		}
	}
	if len(idx) == 0 {
		out = append(out, "no member's /metrics could be read twice: the metrics rules judged nothing")
	}
	return out
}
