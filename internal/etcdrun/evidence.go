package etcdrun

import (
	"math"
	"strings"
	"time"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
)

// stepEvidenceFigures are the figures of one `etcd capacity` step that
// tell which resource limits it, from the step's workload: the worst
// member's backend commit p99, leader changes, slow applies, proposal
// backlog and peer round trip; each member's CPU and the fewest cores of
// any; the load generator's CPU and the machine's. A figure the members
// or the machine do not give is left out.
func stepEvidenceFigures(w result.Workload) []result.Figure {
	// worst is the largest of a per-member figure (memberN<suffix>);
	// ok is false when no member has it.
	worst := func(suffix string) (v float64, ok bool) {
		for _, f := range w.Figures {
			if strings.HasPrefix(f.Name, "member") && strings.HasSuffix(f.Name, suffix) {
				v, ok = max(v, f.Value), true
			}
		}
		return v, ok
	}
	var out []result.Figure
	add := func(name string, v float64, unit, what string) {
		out = append(out, result.Figure{Name: name, Value: v, Unit: unit, Description: what})
	}
	commit, _ := worst("_backend_commit_p99")
	add("backend_commit_p99", commit, "s", "the worst member's backend commit p99 (etcd's histogram)")
	leaders, _ := worst("_leader_changes")
	add("leader_changes", leaders, "count", "leader changes a member saw during the step")
	if v, ok := worst("_slow_applies"); ok {
		add("slow_applies", v, "count", "the most applies over 100 ms a member counted during the step")
	}
	if p := w.Process; p != nil && w.DurationNs > 0 {
		add("client_cpu", float64(p.UserNs+p.SystemNs)/float64(w.DurationNs), "x", "CPUs the load generator used (etcdbench's own process, getrusage over the timed load)")
	}
	for _, name := range []string{etcdload.HostCPUBusy, etcdload.HostCPUs} {
		if f := w.Figure(name); f != nil {
			out = append(out, *f)
		}
	}
	cores := math.Inf(1)
	for _, f := range w.Figures {
		switch {
		case !strings.HasPrefix(f.Name, "member"):
		case strings.HasSuffix(f.Name, "_cpu"):
			add(f.Name, f.Value, "x", "CPUs the member's process used during the step (process_cpu_seconds_total)")
		case strings.HasSuffix(f.Name, "_cores"):
			cores = min(cores, f.Value)
		}
	}
	if !math.IsInf(cores, 1) {
		add("member_cores", cores, "count", "CPUs a member runs on at once (its GOMAXPROCS), the fewest of any member")
	}
	if v, ok := worst("_proposals_pending_max"); ok {
		add("proposals_pending_max", v, "count", "the most proposals a member had pending in a sample during the step (etcd_server_proposals_pending)")
		u, _ := worst("_proposals_unapplied_max")
		add("proposals_unapplied_max", u, "count", "the most entries a member had committed but not applied in a sample during the step")
	}
	if v, ok := worst("_peer_rtt_p99"); ok {
		add("peer_rtt_p99", v, "s", "the worst member's peer round trip p99 during the step (etcd observes it every 30 s, so a short step may have none)")
	}
	return out
}

// sampleEvery is how often an `etcd capacity` step of length step reads
// the members' proposal backlog: five times a step, at most once a
// second (each read is a scrape of every member by the load generator
// while it sends) and at least every 200 ms.
func sampleEvery(step time.Duration) time.Duration {
	return min(max(step/5, 200*time.Millisecond), time.Second)
}
