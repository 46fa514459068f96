package cluster

import (
	"etcdbench/internal/diagnose/data/memory"
	"etcdbench/internal/units"

	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/finding"
	"etcdbench/internal/verdict"
)

// Rule is one check of what the members say together, as data; its
// findings are ranked with the metrics rules' (diagnose.Rank).
type Rule struct {
	diagnose.Rule
	check func(*view, Thresholds) []diagnose.Finding
}

// Rules returns the cluster rules.
func Rules() []*Rule {
	return []*Rule{
		{Rule: diagnose.Rule{ID: "member-unreachable", Title: "no answer", Kind: finding.Unreachable, Rank: 1, Source: "etcdctl endpoint health: every member answers its client URL"}, check: checkUnreachable},
		{Rule: diagnose.Rule{ID: "hash-mismatch", Title: "the key space differs from the other members'", Kind: finding.Corruption, Rank: 2, Source: "etcdctl endpoint hashkv; etcd's corruption check (op-guide/data_corruption.md)"}, check: checkHashes},
		{Rule: diagnose.Rule{ID: "alarm-corrupt", Title: "etcd raised the CORRUPT alarm", Kind: finding.Corruption, Rank: 2, Source: "etcd op-guide/data_corruption.md"}, check: checkAlarm("CORRUPT")},
		{Rule: diagnose.Rule{ID: "quorum-lost", Title: "fewer voting members answer than a quorum", Kind: finding.Leader, Rank: 3, Source: "etcd docs faq.md (a cluster of n members needs n/2+1)"}, check: checkQuorum},
		{Rule: diagnose.Rule{ID: "member-lists-differ", Title: "the members see different member lists", Kind: finding.Disagreement, Rank: 4, Source: "etcd-diagnosis membership check; etcdctl member list per endpoint"}, check: checkMemberLists},
		{Rule: diagnose.Rule{ID: "cluster-ids-differ", Title: "the endpoints belong to different clusters", Kind: finding.Disagreement, Rank: 4, Source: "etcdctl endpoint status (cluster ID in every response header)"}, check: checkClusterIDs},
		{Rule: diagnose.Rule{ID: "version-skew", Title: "members run versions too far apart", Kind: finding.Disagreement, Rank: 8, Source: "etcd upgrade guides (one minor version at a time)"}, check: checkVersions},
		{Rule: diagnose.Rule{ID: "alarm-nospace", Title: "etcd raised the NOSPACE alarm: writes are refused", Kind: finding.Database, Rank: 39, Source: "etcd op-guide/maintenance.md (space quota)"}, check: checkAlarm("NOSPACE")},
		{Rule: diagnose.Rule{ID: "raft-lag", Title: "the member lags behind the leader", Kind: finding.Member, Rank: 47, Source: "etcdctl endpoint status (raft index, applied index)"}, check: checkLag},
		{Rule: diagnose.Rule{ID: "slow-reads", Title: "the member serves reads slowly", Kind: finding.Member, Rank: 48, Source: "etcd-diagnosis read latency check; etcd benchmark (range)"}, check: checkReads},
		{Rule: diagnose.Rule{ID: "timeouts", Title: "the member's timeouts are short for the round trip between members", Kind: finding.Network, Rank: 44, Source: "etcd docs tuning.md (heartbeat about the round trip, election timeout about ten times it)"}, check: checkTimeouts},
		{Rule: diagnose.Rule{ID: "leader-place", Title: "another member would lead with a nearer quorum", Kind: finding.Network, Rank: 45, Source: "raft: a put waits for the leader's quorum; etcdctl move-leader"}, check: checkLeaderPlace},
		{Rule: diagnose.Rule{ID: "network-reads", Title: "linearizable reads wait for the round trips between members", Kind: finding.Network, Rank: 46, Source: "etcd: ReadIndex (raft thesis 6.4); etcd docs tuning.md"}, check: checkNetworkReads},
		{Rule: diagnose.Rule{ID: "memory-limit", Title: "the member is near its memory limit", Kind: finding.Memory, Rank: 46, Source: "the kernel's OOM killer at the cgroup's limit; etcd-io/etcd#12342"}, check: checkMemory},
		{Rule: diagnose.Rule{ID: "leader-disagreement", Title: "the members do not agree on one leader", Kind: finding.Leader, Rank: 49, Source: "etcdctl endpoint status (leader)"}, check: checkLeaders},
	}
}

// view is the members as they answered, with what follows from them.
type view struct {
	probes []*probe
	// labels name each probe's member: "name (endpoint)".
	labels []string
	// names are member names by ID, from every member list.
	names map[uint64]string
	// leaderIndex is the raft index of the leader as it reported it
	// (0: the leader did not answer).
	leaderIndex uint64
	voters      map[uint64]bool
	// quotas are the members' --quota-backend-bytes from their metrics
	// (etcd_server_quota_backend_bytes), by place; 0 where unknown.
	quotas []int64
	// rtt is each member's round trip p99 to its peers (by peer ID) from
	// etcd's prober over the window, by place; nil where none.
	rtt []map[uint64]float64
	// timeouts are the timeouts each member runs with, by place, where
	// its process on this machine told them (memberTimeouts); nil where
	// not known.
	timeouts []*timeouts
	// memory is each member's resident memory and memory limit (nil:
	// neither is known).
	memory []*memberMemory
}

// memberMemory is a member's resident memory (its metrics', else its
// VmRSS; 0: not known) and, when it runs on this machine, its limit.
type memberMemory struct {
	resident int64
	limit    memory.Limit
}

func (v *view) answered() []int {
	var out []int
	for i, p := range v.probes {
		if p.failure == "" {
			out = append(out, i)
		}
	}
	return out
}

func (v *view) name(id uint64) string {
	if n := v.names[id]; n != "" {
		return n
	}
	return fmt.Sprintf("%x", id)
}

func newView(ps []*probe) *view {
	v := &view{probes: ps, names: map[uint64]string{}, voters: map[uint64]bool{}}
	byURL := map[string]string{}
	for _, p := range ps {
		for _, m := range p.members {
			if m.Name != "" {
				v.names[m.ID] = m.Name
			}
			if !m.IsLearner {
				v.voters[m.ID] = true
			}
			for _, u := range m.ClientURLs {
				byURL[strings.TrimSuffix(u, "/")] = m.Name
			}
		}
	}
	for _, p := range ps {
		name := byURL[strings.TrimSuffix(p.endpoint, "/")]
		if p.status != nil {
			if n := v.names[p.status.Header.MemberId]; n != "" {
				name = n
			}
			if p.status.Leader == p.status.Header.MemberId {
				v.leaderIndex = p.status.RaftIndex
			}
		}
		if name == "" {
			name = "?"
		}
		v.labels = append(v.labels, name+" ("+p.endpoint+")")
	}
	return v
}

// lag is how far behind the leader's committed index the member has
// applied.
func (v *view) lag(p *probe) uint64 {
	if p.status == nil || v.leaderIndex <= p.status.RaftAppliedIndex {
		return 0
	}
	return v.leaderIndex - p.status.RaftAppliedIndex
}

// check runs every rule.
func (v *view) check(rules []*Rule, th Thresholds) []diagnose.Finding {
	var out []diagnose.Finding
	for _, r := range rules {
		for _, f := range r.check(v, th) {
			f.Rule = &r.Rule
			f.Kind = r.Kind
			f.Facts = []finding.Fact{{Name: f.Threshold.ID, Value: f.Value, Unit: f.Threshold.Unit, Limit: f.Threshold.Limit}}
			out = append(out, f)
		}
	}
	return out
}

var (
	answers    = verdict.Threshold{ID: "member_answers", Title: "members not answering", Limit: 1, Unit: "count", Source: "every member answers its client URL within the per-member deadline (--timeout)"}
	agreeing   = verdict.Threshold{ID: "views", Title: "distinct answers among the members", Limit: 2, Unit: "count", Source: "the members of one cluster share it"}
	quorumTh   = verdict.Threshold{ID: "voters_answering", Title: "voting members answering", Unit: "count", Source: "raft: a majority of the voting members (n/2+1)"}
	alarmTh    = verdict.Threshold{ID: "alarms", Title: "alarms raised", Limit: 1, Unit: "count", Source: "etcdctl alarm list"}
	adviceDown = map[string]string{
		NotAnswering:  "look at the member's process (stopped, swapping, starved of CPU?), its host and the network to it (etcdctl endpoint status --endpoints <it>); the others are reported in full",
		Down:          "start the member (systemctl status etcd; its logs: etcdbench diagnose logs) or remove it (etcdctl member remove) if it is gone for good",
		WrongEndpoint: "give the members' client URLs (etcdctl member list shows them), not a peer, metrics or other URL",
		TLSMismatch:   "give the scheme the member serves (https:// with --cacert, --cert, --key as etcdctl's) or plain http://",
	}
)

// checkMemory finds the members whose resident memory is near their
// limit: little room is left for a full LIST (diagnose data predicts
// what each costs).
func checkMemory(v *view, th Thresholds) []diagnose.Finding {
	var out []diagnose.Finding
	for i, m := range v.memory {
		if m == nil || m.resident <= 0 || !m.limit.Known() {
			continue
		}
		if r := float64(m.resident) / float64(m.limit.Bytes); r >= th.MemoryShare.Limit {
			out = append(out, diagnose.Finding{
				Member: v.labels[i], Status: verdict.Warn, Threshold: th.MemoryShare, Value: r,
				Evidence: fmt.Sprintf("%s holds %s resident, %.0f %% of its %s limit (%s)", v.labels[i], units.FormatBytes(m.resident), 100*r, units.FormatBytes(m.limit.Bytes), m.limit.From),
				Advice:   "see what a LIST of each resource costs it: etcdbench diagnose data --endpoints <it> --dir DIR; page LISTs, serve them from kube-apiserver's watch cache, compact and defragment, or raise its limit",
			})
		}
	}
	return out
}

func checkUnreachable(v *view, _ Thresholds) []diagnose.Finding {
	var out []diagnose.Finding
	n := len(v.answered())
	for i, p := range v.probes {
		if p.failure == "" {
			continue
		}
		out = append(out, diagnose.Finding{
			Member: v.labels[i], Status: verdict.Fail, Threshold: answers, Value: 1,
			Evidence: fmt.Sprintf("%s: %s; %d of the %d endpoints answered", v.labels[i], p.reason, n, len(v.probes)),
			Advice:   adviceDown[p.failure],
		})
	}
	return out
}

func checkQuorum(v *view, _ Thresholds) []diagnose.Finding {
	voters, up, need := v.quorum()
	if voters == 0 || up >= need {
		return nil
	}
	th := quorumTh
	th.Limit = float64(need)
	return []diagnose.Finding{{
		Member: "cluster", Status: verdict.Fail, Threshold: th, Value: float64(up),
		Evidence: fmt.Sprintf("%d of %d voting members answer, a quorum needs %d: the cluster accepts no writes and no linearizable reads", up, voters, need),
		Advice:   "bring the members that do not answer back first (see the findings above); if they are lost for good, restore from a snapshot (etcd op-guide/recovery.md)",
	}}
}

// quorum counts the voting members in the member lists, those that
// answered and the majority they need.
func (v *view) quorum() (voters, up, need int) {
	voters = len(v.voters)
	for _, i := range v.answered() {
		if st := v.probes[i].status; st != nil && v.voters[st.Header.MemberId] {
			up++
		}
	}
	return voters, up, voters/2 + 1
}

// differ returns a finding when the members' answers (by key) are not
// all the same.
func differ(v *view, key func(*probe) (string, bool), what string, advice string) []diagnose.Finding {
	seen := map[string][]string{}
	for _, i := range v.answered() {
		if k, ok := key(v.probes[i]); ok {
			seen[k] = append(seen[k], v.labels[i])
		}
	}
	if len(seen) < 2 {
		return nil
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		parts = append(parts, fmt.Sprintf("%s: %s", strings.Join(seen[k], ", "), k))
	}
	return []diagnose.Finding{{
		Member: "cluster", Status: verdict.Fail, Threshold: agreeing, Value: float64(len(seen)),
		Evidence: fmt.Sprintf("%d different %s: %s", len(seen), what, strings.Join(parts, "; ")),
		Advice:   advice,
	}}
}

func checkMemberLists(v *view, _ Thresholds) []diagnose.Finding {
	return differ(v, func(p *probe) (string, bool) {
		if p.members == nil {
			return "", false
		}
		var ms []string
		for _, m := range p.members {
			ms = append(ms, memberWords(m.Name, m.ID, m.IsLearner))
		}
		sort.Strings(ms)
		return "[" + strings.Join(ms, " ") + "]", true
	}, "member lists", "a member that missed a membership change is stale: compare with etcdctl member list on each endpoint, and remove and re-add the odd one out")
}

func memberWords(name string, id uint64, learner bool) string {
	s := fmt.Sprintf("%s=%x", name, id)
	if learner {
		s += "(learner)"
	}
	return s
}

func checkClusterIDs(v *view, _ Thresholds) []diagnose.Finding {
	return differ(v, func(p *probe) (string, bool) {
		return fmt.Sprintf("cluster %x", p.status.Header.ClusterId), true
	}, "cluster IDs", "the endpoints are members of different clusters: give the client URLs of one cluster's members")
}

func checkLeaders(v *view, _ Thresholds) []diagnose.Finding {
	var out []diagnose.Finding
	for _, i := range v.answered() {
		if v.probes[i].status.Leader == 0 {
			out = append(out, diagnose.Finding{
				Member: v.labels[i], Status: verdict.Fail, Threshold: agreeing, Value: 0,
				Evidence: v.labels[i] + " has no leader: it accepts no writes and no linearizable reads",
				Advice:   "a member without a leader cannot reach a quorum: see the members not answering, the network between them and their elections (diagnose metrics, diagnose logs)",
			})
		}
	}
	return append(out, differ(v, func(p *probe) (string, bool) {
		if p.status.Leader == 0 {
			return "", false
		}
		return "leader " + v.name(p.status.Leader), true
	}, "leaders", "members that see different leaders are partitioned or mid-election: look at the network between them and at leader changes (diagnose metrics)")...)
}

func checkVersions(v *view, th Thresholds) []diagnose.Finding {
	type mv struct{ major, minor int }
	vs := map[string]mv{}
	var lo, hi *mv
	for _, i := range v.answered() {
		s := v.probes[i].version.Server
		parts := strings.SplitN(s, ".", 3)
		if len(parts) < 2 {
			continue
		}
		maj, e1 := strconv.Atoi(parts[0])
		mnr, e2 := strconv.Atoi(parts[1])
		if e1 != nil || e2 != nil {
			continue
		}
		x := mv{maj, mnr}
		vs[v.labels[i]] = x
		if lo == nil || x.major < lo.major || x.major == lo.major && x.minor < lo.minor {
			lo = &x
		}
		if hi == nil || x.major > hi.major || x.major == hi.major && x.minor > hi.minor {
			hi = &x
		}
	}
	if lo == nil || *lo == *hi {
		return nil
	}
	skew := float64(hi.minor - lo.minor)
	if hi.major != lo.major {
		skew = math.Inf(1)
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(vs)) {
		parts = append(parts, fmt.Sprintf("%s %d.%d", k, vs[k].major, vs[k].minor))
	}
	st := verdict.Warn
	if skew >= th.MinorSkew.Limit {
		st = verdict.Fail
	}
	return []diagnose.Finding{{
		Member: "cluster", Status: st, Threshold: th.MinorSkew, Value: math.Min(skew, 99),
		Evidence: "mixed versions: " + strings.Join(parts, ", "),
		Advice:   "finish the upgrade (or downgrade) one member at a time, one minor version at a time; mixed versions are meant to last only while it runs",
	}}
}

func checkAlarm(kind string) func(*view, Thresholds) []diagnose.Finding {
	return func(v *view, _ Thresholds) []diagnose.Finding {
		raised := map[uint64]bool{}
		for _, i := range v.answered() {
			for _, a := range v.probes[i].alarms {
				if a.Alarm.String() == kind {
					raised[a.MemberID] = true
				}
			}
		}
		var out []diagnose.Finding
		for id := range raised {
			label := v.name(id)
			for i, p := range v.probes {
				if p.status != nil && p.status.Header.MemberId == id {
					label = v.labels[i]
				}
			}
			f := diagnose.Finding{Member: label, Status: verdict.Fail, Threshold: alarmTh, Value: 1,
				Evidence: fmt.Sprintf("%s raised the %s alarm (etcdctl alarm list)", label, kind)}
			if kind == "NOSPACE" {
				f.Evidence += ": the cluster refuses writes until it is disarmed"
				f.Advice = diagnose.AdviceQuota
			} else {
				f.Advice = "stop writing to the member, take a snapshot from a healthy member and replace the corrupt one (etcd op-guide/data_corruption.md)"
			}
			out = append(out, f)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Member < out[j].Member })
		return out
	}
}

func checkLag(v *view, th Thresholds) []diagnose.Finding {
	var out []diagnose.Finding
	for _, i := range v.answered() {
		p := v.probes[i]
		lag := v.lag(p)
		if float64(lag) < th.Lag.Limit {
			continue
		}
		st, who := verdict.Fail, "member"
		if p.status.IsLearner {
			st, who = verdict.Warn, "learner"
		}
		out = append(out, diagnose.Finding{
			Member: v.labels[i], Status: st, Threshold: th.Lag, Value: float64(lag),
			Evidence: fmt.Sprintf("the %s %s has applied raft index %d, %d behind the leader's %d (its own commit index %d)",
				who, v.labels[i], p.status.RaftAppliedIndex, lag, v.leaderIndex, p.status.RaftIndex),
			Advice: "a member that cannot keep up has a slow disk, a starved CPU or a slow link to the leader (see its metrics findings); a learner is promoted only once it has caught up",
		})
	}
	return out
}

// p99 of a read series, NaN when none was measured.
func p99(p *probe, linear bool) float64 {
	h := p.serializable
	if linear {
		h = p.linearizable
	}
	if h == nil || h.TotalCount() == 0 {
		return math.NaN()
	}
	return time.Duration(h.ValueAtQuantile(99)).Seconds()
}

func checkReads(v *view, th Thresholds) []diagnose.Finding {
	var out []diagnose.Finding
	for _, i := range v.answered() {
		p := v.probes[i]
		if ok, _, _ := v.networkReads(i); ok && p99(p, true) >= th.ReadP99.Limit {
			continue // the network's (checkNetworkReads)
		}
		if lin := p99(p, true); lin >= th.ReadP99.Limit {
			out = append(out, diagnose.Finding{
				Member: v.labels[i], Status: verdict.Fail, Threshold: th.ReadP99, Value: lin,
				Evidence: fmt.Sprintf("linearizable read p99 %v at %s (serializable %v), over %v", secs(lin), v.labels[i], secs(p99(p, false)), secs(th.ReadP99.Limit)),
				Advice:   adviceReads,
			})
			continue
		}
		for _, linear := range []bool{true, false} {
			mine := p99(p, linear)
			best := math.Inf(1)
			for _, j := range v.answered() {
				if j != i {
					best = math.Min(best, p99(v.probes[j], linear))
				}
			}
			if math.IsNaN(mine) || math.IsInf(best, 1) || math.IsNaN(best) || mine < th.ReadFloor.Limit || mine < th.ReadRatio.Limit*best {
				continue
			}
			kind := "serializable"
			if linear {
				kind = "linearizable"
			}
			out = append(out, diagnose.Finding{
				Member: v.labels[i], Status: verdict.Warn, Threshold: th.ReadRatio, Value: mine / best,
				Evidence: fmt.Sprintf("%s read p99 %v at %s, %.1f x the fastest other member's %v", kind, secs(mine), v.labels[i], mine/best, secs(best)),
				Advice:   adviceReads,
			})
			break
		}
	}
	return out
}

const adviceReads = "a member slow to serve small reads is busy or starved (CPU, disk, or the link to the leader for linearizable reads): see its metrics findings, and point clients at the other members meanwhile"

func secs(s float64) string {
	if math.IsNaN(s) {
		return "n/a"
	}
	return time.Duration(s * float64(time.Second)).Round(10 * time.Microsecond).String()
}

func checkHashes(v *view, _ Thresholds) []diagnose.Finding {
	type key struct{ rev, compact int64 }
	groups := map[key]map[uint32][]string{}
	for _, i := range v.answered() {
		h := v.probes[i].hash
		if h == nil {
			continue
		}
		k := key{h.HashRevision, h.CompactRevision}
		if groups[k] == nil {
			groups[k] = map[uint32][]string{}
		}
		groups[k][h.Hash] = append(groups[k][h.Hash], v.labels[i])
	}
	var out []diagnose.Finding
	for k, byHash := range groups {
		if len(byHash) < 2 {
			continue
		}
		var parts []string
		for h, ms := range byHash {
			parts = append(parts, fmt.Sprintf("%s: %08x", strings.Join(ms, ", "), h))
		}
		sort.Strings(parts)
		out = append(out, diagnose.Finding{
			Member: "cluster", Status: verdict.Fail, Threshold: agreeing, Value: float64(len(byHash)),
			Evidence: fmt.Sprintf("the hash of the key space at revision %d (compacted at %d) differs: %s", k.rev, k.compact, strings.Join(parts, "; ")),
			Advice:   "a member whose data differ is corrupt: stop writing to it, replace it from a healthy member's snapshot (etcd op-guide/data_corruption.md; etcd's --experimental-corrupt-check-time checks this periodically)",
		})
	}
	return out
}
