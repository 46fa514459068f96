package diagnose

import (
	"fmt"
	"math"
	"strings"
	"time"

	"etcdbench/internal/finding"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// Finding is one rule firing for one member (or for the logs): the
// rule's kind and the fact it judged (finding.Finding, set by Diagnose),
// with the evidence and advice in words.
type Finding struct {
	finding.Finding
	Rule   *Rule
	Member string // member name, or "logs"
	Status verdict.Status
	// Threshold is what Value was judged against, with its source.
	Threshold verdict.Threshold
	Value     float64
	// Evidence says the numbers that support the finding.
	Evidence string
	// Advice says what to do.
	Advice string
}

// severity is how far over its limit a finding is, for ranking within a
// rule's rank.
func (f Finding) severity() float64 {
	if f.Threshold.Limit == 0 || math.IsNaN(f.Value) {
		return 0
	}
	r := f.Value / f.Threshold.Limit
	if f.Threshold.ID == "db_fragmentation" && f.Value > 0 {
		r = f.Threshold.Limit / f.Value // lower is worse
	}
	return r
}

// Rule maps evidence to findings. Rules are data: Rules lists them, and
// nothing else decides what is a cause.
type Rule struct {
	ID    string
	Title string
	// Kind is what the rule blames.
	Kind finding.Kind
	// Rank orders findings of the same status: causes (disk, CPU,
	// network, database) before the symptoms they produce (elections,
	// failed requests).
	Rank int
	// Source names where the rule's reasoning comes from (the
	// thresholds carry their own).
	Source string
	Check  func(Evidence, verdict.DiagnoseThresholds) []Finding
}

// Advice shared by several rules, from etcd's docs and the seed articles.
const (
	adviceDisk = "move the data dir (at least member/wal, --wal-dir) to a dedicated local SSD/NVMe; keep other writers off that disk or " +
		"give etcd I/O priority (ionice -c2 -n0 -p $(pgrep etcd), or ionice -c3 for the noisy neighbours); check the disk with " +
		"'etcdbench disk wal --dir <data dir>'; a smaller --snapshot-count shortens the WAL replayed after restarts but snapshots then write more often"
	adviceCPU = "give etcd dedicated CPUs (no CPU limits or noisy neighbours; raise the process priority, e.g. renice -n -10), " +
		"look for expensive requests (large ranges, many keys per txn, watch fan-out) in 'diagnose logs', and keep GOMAXPROCS at the cores etcd may use"
	adviceNetwork = "check the network between members (latency, loss, saturated links, MTU); keep members in one region or raise " +
		"--heartbeat-interval to about the peer round trip and --election-timeout to about 10 x that (e.g. 150 ms / 1500 ms)"
	adviceElection = "leader changes stall writes for an election timeout each; the cause is usually a slow disk, CPU starvation or the network " +
		"(see the other findings); tune --heartbeat-interval and --election-timeout to the peer round trip once those are fixed"
	// AdviceQuota is what to do about a db at its quota or a NOSPACE
	// alarm.
	AdviceQuota = "compact old revisions (etcdctl compact <rev>, or --auto-compaction-retention), defragment each member " +
		"(etcdctl defrag, one member at a time), disarm the NOSPACE alarm (etcdctl alarm disarm), and raise --quota-backend-bytes (8 GiB at most is advised) if the data really grew"
	adviceDefrag = "defragment each member in turn (etcdctl defrag --endpoints <one member>): it rewrites the file to its in-use size; " +
		"it blocks that member while it runs, so do it off-peak"
	adviceRequests = "look at which methods fail (the figures by gRPC code) and at the other findings: Unavailable and DeadlineExceeded follow " +
		"leader loss and overload"
)

// Rules returns the registered rules in rank order.
func Rules() []*Rule {
	return []*Rule{
		{ID: "slow-disk-wal", Title: "WAL fdatasync is slow", Kind: finding.Disk, Rank: 10, Source: "etcd FAQ and op-guide/hardware.md", Check: checkWAL},
		{ID: "slow-disk-backend", Title: "backend commit is slow", Kind: finding.Disk, Rank: 11, Source: "etcd FAQ", Check: checkBackend},
		{ID: "slow-disk-logs", Title: "etcd logged slow fdatasyncs", Kind: finding.Disk, Rank: 12, Source: "etcd server/storage/wal/wal.go (warnSyncDuration 1 s)", Check: checkLogFdatasync},
		{ID: "cpu-saturated", Title: "etcd uses all its CPUs", Kind: finding.CPU, Rank: 20, Source: "process_cpu_seconds_total / GOMAXPROCS", Check: checkCPU},
		{ID: "slow-applies", Title: "applies are slow while the disk is fine", Kind: finding.CPU, Rank: 21, Source: "etcd server/etcdserver/util.go warnOfExpensiveRequest", Check: checkApplies},
		{ID: "peer-rtt", Title: "peer round trips are slow", Kind: finding.Network, Rank: 30, Source: "etcd contrib/mixin etcdMemberCommunicationSlow; etcd docs tuning.md", Check: checkPeerRTT},
		{ID: "heartbeat-failures", Title: "the leader failed to send heartbeats on time", Kind: finding.Network, Rank: 31, Source: "etcd server/etcdserver/raft.go", Check: checkHeartbeats},
		{ID: "db-quota", Title: "the database is near its quota", Kind: finding.Database, Rank: 40, Source: "etcd op-guide/maintenance.md (space quota)", Check: checkQuota},
		{ID: "db-fragmentation", Title: "the database file is mostly free pages", Kind: finding.Database, Rank: 41, Source: "etcd op-guide/maintenance.md (defragmentation)", Check: checkFragmentation},
		{ID: "compaction-pauses", Title: "compaction or defragmentation blocks the backend", Kind: finding.Contention, Rank: 44, Source: "etcd op-guide/maintenance.md (history compaction, defragmentation)", Check: checkCompaction},
		{ID: "slow-requests", Title: "requests took too long", Kind: finding.Contention, Rank: 46, Source: "etcd server/etcdserver/util.go warnOfExpensiveRequest and v3rpc request stats (over 100 ms)", Check: checkSlowRequests},
		{ID: "proposals-backlog", Title: "proposals pile up", Kind: finding.Contention, Rank: 45, Source: "etcd op-guide/monitoring.md (proposals)", Check: checkPending},
		{ID: "no-leader", Title: "the member has no leader", Kind: finding.Leader, Rank: 50, Source: "etcd contrib/mixin etcdNoLeader", Check: checkNoLeader},
		{ID: "leader-changes", Title: "the leader changed", Kind: finding.Leader, Rank: 51, Source: "etcd contrib/mixin etcdHighNumberOfLeaderChanges", Check: checkLeaderChanges},
		{ID: "failed-proposals", Title: "proposals failed", Kind: finding.Requests, Rank: 60, Source: "etcd contrib/mixin etcdHighNumberOfFailedProposals", Check: checkFailedProposals},
		{ID: "grpc-errors", Title: "gRPC requests fail", Kind: finding.Requests, Rank: 61, Source: "etcd contrib/mixin etcdHighNumberOfFailedGRPCRequests", Check: checkGRPC},
	}
}

// ok reports whether v is a number (not missing).
func ok(v float64) bool { return !math.IsNaN(v) }

func dur(s float64) string {
	if math.IsNaN(s) {
		return "n/a"
	}
	return units.FromSeconds(s).Round(10 * time.Microsecond).String()
}

// over reports whether v reaches th's limit.
func over(v float64, th verdict.Threshold) bool { return ok(v) && v >= th.Limit }

// during says what the counts cover.
func during(ev Evidence) string {
	if ev.SinceStart() {
		return "since the process started"
	}
	return "in the " + ev.Window.String() + " window"
}

// fewSamples is the fewest syncs or commits in the window whose p99 a
// rule FAILs on: under it the "p99" is the slowest of a handful, which a
// single scheduling hiccup on an idle member makes, and the finding is a
// WARN that says how few there were.
const fewSamples = 20

// p99Status is a p99 rule's status for count observations, and what the
// evidence adds when they are few.
func p99Status(count float64, what string) (verdict.Status, string) {
	if count < fewSamples {
		return verdict.Warn, fmt.Sprintf("; only %.0f %s, too few for a p99 (%d or more): watch it under load", count, what, fewSamples)
	}
	return verdict.Fail, ""
}

func checkWAL(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		if !over(m.WALFsync.P99, th.WALFsyncP99) {
			continue
		}
		status, few := p99Status(m.WALFsync.Count, "syncs")
		out = append(out, Finding{
			Member: m.Name, Status: status, Threshold: th.WALFsyncP99, Value: m.WALFsync.P99,
			Evidence: fmt.Sprintf("WAL fdatasync p99 %s (p50 %s, %.0f syncs %s) is over %s; backend commit p99 %s%s",
				dur(m.WALFsync.P99), dur(m.WALFsync.P50), m.WALFsync.Count, during(ev), dur(th.WALFsyncP99.Limit), dur(m.BackendCommit.P99), few),
			Advice: adviceDisk,
		})
	}
	return out
}

func checkBackend(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		if !over(m.BackendCommit.P99, th.BackendCommitP99) {
			continue
		}
		status, few := p99Status(m.BackendCommit.Count, "commits")
		out = append(out, Finding{
			Member: m.Name, Status: status, Threshold: th.BackendCommitP99, Value: m.BackendCommit.P99,
			Evidence: fmt.Sprintf("backend commit p99 %s (p50 %s, %.0f commits %s) is over %s; WAL fdatasync p99 %s%s",
				dur(m.BackendCommit.P99), dur(m.BackendCommit.P50), m.BackendCommit.Count, during(ev), dur(th.BackendCommitP99.Limit), dur(m.WALFsync.P99), few),
			Advice: adviceDisk + "; compaction and defragmentation also write the whole db: run them off-peak",
		})
	}
	return out
}

// logThreshold is a count threshold for log events.
func logThreshold(id, title, source string) verdict.Threshold {
	return verdict.Threshold{ID: id, Title: title, Limit: 1, Unit: "count", Source: source}
}

func checkLogFdatasync(ev Evidence, _ verdict.DiagnoseThresholds) []Finding {
	n := ev.Logs.Count(KindSlowFdatasync)
	if n == 0 {
		return nil
	}
	w := ev.Logs.Kinds[KindSlowFdatasync].Worst
	return []Finding{{
		Member: "logs", Status: verdict.Fail, Value: float64(n),
		Threshold: logThreshold("log_slow_fdatasync", "\"slow fdatasync\" log lines", "etcd server/storage/wal/wal.go: logged when one WAL fdatasync takes over 1 s"),
		Evidence:  fmt.Sprintf("%d \"slow fdatasync\" lines; the worst took %v (%s)", n, w.Took.Round(time.Millisecond), stamp(w.Time)),
		Advice:    adviceDisk,
	}}
}

func checkCPU(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		busy := m.CPUBusy(ev.Window)
		if !over(busy, th.CPUBusy) {
			continue
		}
		out = append(out, Finding{
			Member: m.Name, Status: verdict.Fail, Threshold: th.CPUBusy, Value: busy,
			Evidence: fmt.Sprintf("the etcd process used %.1f CPU seconds in %v: %.0f %% of %g cores (%s); apply p99 %s, slow applies %s",
				m.CPUSeconds, ev.Window, 100*busy, m.Cores, m.CoresFrom, dur(m.Apply.P99), count(m.SlowApplies)),
			Advice: adviceCPU,
		})
	}
	return out
}

func count(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", v)
}

// diskFine reports whether m's disk figures are known and under their
// limits.
func diskFine(m Member, th verdict.DiagnoseThresholds) bool {
	return ok(m.WALFsync.P99) && !over(m.WALFsync.P99, th.WALFsyncP99) && !over(m.BackendCommit.P99, th.BackendCommitP99)
}

func checkApplies(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		slowP99, slowCount := over(m.Apply.P99, th.ApplyP99), over(m.SlowApplies, th.SlowApplies)
		if !slowP99 && !slowCount {
			continue
		}
		f := Finding{Member: m.Name, Status: verdict.Fail, Advice: adviceCPU}
		if slowP99 {
			f.Threshold, f.Value = th.ApplyP99, m.Apply.P99
		} else {
			f.Threshold, f.Value = th.SlowApplies, m.SlowApplies
		}
		disk := fmt.Sprintf("the disk is fine (WAL fdatasync p99 %s, backend commit p99 %s)", dur(m.WALFsync.P99), dur(m.BackendCommit.P99))
		if !diskFine(m, th) {
			if ok(m.WALFsync.P99) {
				continue // the slow disk explains slow applies: its own finding says so
			}
			disk = "the disk figures are unknown (no WAL syncs observed)"
			f.Status = verdict.Warn
		}
		f.Evidence = fmt.Sprintf("apply p99 %s, %s applies over 100 ms %s, while %s; process CPU %s",
			dur(m.Apply.P99), count(m.SlowApplies), during(ev), disk, cpuWords(m, ev))
		out = append(out, f)
	}
	if n := ev.Logs.Count(KindSlowApply); n > 0 && ev.Logs.Count(KindSlowFdatasync) == 0 {
		w := ev.Logs.Kinds[KindSlowApply].Worst
		out = append(out, Finding{
			Member: "logs", Status: verdict.Fail, Value: float64(n), Advice: adviceCPU,
			Threshold: logThreshold("log_slow_apply", "\"apply request took too long\" log lines", "etcd server/etcdserver/util.go: logged over --warning-apply-duration (100 ms)"),
			Evidence: fmt.Sprintf("%d \"apply request took too long\" lines and no \"slow fdatasync\"; the worst took %v (%s): %s",
				n, w.Took.Round(time.Millisecond), stamp(w.Time), w.Line),
		})
	}
	return out
}

func cpuWords(m Member, ev Evidence) string {
	busy := m.CPUBusy(ev.Window)
	if math.IsNaN(busy) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %% of %g cores", 100*busy, m.Cores)
}

func checkPeerRTT(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		worst, wp := math.NaN(), ""
		var all []string
		for _, p := range sortedKeys(m.PeerRTTP99) {
			v := m.PeerRTTP99[p]
			all = append(all, fmt.Sprintf("to %s %s", p, dur(v)))
			if ok(v) && (math.IsNaN(worst) || v > worst) {
				worst, wp = v, p
			}
		}
		if !over(worst, th.PeerRTTP99) {
			continue
		}
		out = append(out, Finding{
			Member: m.Name, Status: verdict.Fail, Threshold: th.PeerRTTP99, Value: worst,
			Evidence: fmt.Sprintf("peer round-trip p99 to %s is %s, over %s (%s)", wp, dur(worst), dur(th.PeerRTTP99.Limit), strings.Join(all, ", ")),
			Advice:   adviceNetwork,
		})
	}
	return out
}

func checkHeartbeats(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		if !over(m.HeartbeatFailures, th.HeartbeatFails) {
			continue
		}
		out = append(out, Finding{
			Member: m.Name, Status: verdict.Fail, Threshold: th.HeartbeatFails, Value: m.HeartbeatFailures,
			Evidence: fmt.Sprintf("%.0f heartbeat send failures %s; WAL fdatasync p99 %s (etcd's own message blames a slow disk when it is slow too)",
				m.HeartbeatFailures, during(ev), dur(m.WALFsync.P99)),
			Advice: adviceNetwork + "; if the disk is slow too, fix that first",
		})
	}
	if n := ev.Logs.Count(KindHeartbeatLate); n > 0 {
		w := ev.Logs.Kinds[KindHeartbeatLate].Worst
		out = append(out, Finding{
			Member: "logs", Status: verdict.Fail, Value: float64(n), Advice: adviceNetwork + "; etcd says this is likely an overloaded or slow disk, so check the slow-disk findings first",
			Threshold: logThreshold("log_heartbeat_late", "\"leader failed to send out heartbeat on time\" log lines", "etcd server/etcdserver/raft.go: logged when a heartbeat is over 2 x --heartbeat-interval late"),
			Evidence:  fmt.Sprintf("%d late heartbeats; the worst was %v late (%s)", n, w.Took.Round(time.Millisecond), stamp(w.Time)),
		})
	}
	return out
}

func checkQuota(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		if !ok(m.DBSize) || !(m.Quota > 0) {
			continue
		}
		r := m.DBSize / m.Quota
		if !over(r, th.DBQuota) {
			continue
		}
		out = append(out, Finding{
			Member: m.Name, Status: verdict.Fail, Threshold: th.DBQuota, Value: r,
			Evidence: fmt.Sprintf("the db file is %s of a %s quota (%.0f %%), %s of it in use", mib(m.DBSize), mib(m.Quota), 100*r, mib(m.DBInUse)),
			Advice:   AdviceQuota,
		})
	}
	if n := ev.Logs.Count(KindSpaceExceeded); n > 0 {
		out = append(out, Finding{
			Member: "logs", Status: verdict.Fail, Value: float64(n), Advice: AdviceQuota,
			Threshold: logThreshold("log_db_space_exceeded", "\"database space exceeded\" and NOSPACE alarm log lines", "etcd op-guide/maintenance.md: at the quota etcd raises NOSPACE and refuses writes"),
			Evidence:  fmt.Sprintf("%d \"database space exceeded\" or NOSPACE alarm lines, first at %s", n, stamp(ev.Logs.Kinds[KindSpaceExceeded].Worst.Time)),
		})
	}
	return out
}

func mib(b float64) string {
	if math.IsNaN(b) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", b/(1<<20))
}

func checkFragmentation(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		if !ok(m.DBInUse) || !(m.DBSize > 0) || m.DBInUse < th.FragmentedMin.Limit {
			continue
		}
		r := m.DBInUse / m.DBSize
		if r >= th.Fragmentation.Limit {
			continue
		}
		out = append(out, Finding{
			Member: m.Name, Status: verdict.Warn, Threshold: th.Fragmentation, Value: r,
			Evidence: fmt.Sprintf("%s of the %s db file is in use (%.0f %%): the rest are free pages that bbolt still pages through and that count against the quota",
				mib(m.DBInUse), mib(m.DBSize), 100*r),
			Advice: adviceDefrag,
		})
	}
	return out
}

func checkPending(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		if !over(m.ProposalsPending, th.ProposalsPending) {
			continue
		}
		out = append(out, Finding{
			Member: m.Name, Status: verdict.Warn, Threshold: th.ProposalsPending, Value: m.ProposalsPending,
			Evidence: fmt.Sprintf("%.0f proposals pending at the end of the window (%s committed %s); WAL fdatasync p99 %s, apply p99 %s",
				m.ProposalsPending, count(m.ProposalsCommitted), during(ev), dur(m.WALFsync.P99), dur(m.Apply.P99)),
			Advice: "the cluster does not commit as fast as clients propose: fix a slow disk or CPU first, then spread or rate-limit the writers",
		})
	}
	return out
}

func checkNoLeader(ev Evidence, _ verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		if !ok(m.HasLeader) || m.HasLeader != 0 {
			continue
		}
		out = append(out, Finding{
			Member: m.Name, Status: verdict.Fail, Value: 0,
			Threshold: verdict.Threshold{ID: "has_leader", Title: "member has a leader", Limit: 1, Unit: "count", Source: "etcd contrib/mixin alert etcdNoLeader: etcd_server_has_leader == 0"},
			Evidence:  "etcd_server_has_leader is 0: this member serves no writes and no linearizable reads",
			Advice:    "check that a quorum of members runs and can reach each other (peer URLs, firewall); " + adviceElection,
		})
	}
	return out
}

func checkLeaderChanges(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		if !over(m.LeaderChanges, th.LeaderChanges) {
			continue
		}
		out = append(out, Finding{
			Member: m.Name, Status: verdict.Fail, Threshold: th.LeaderChanges, Value: m.LeaderChanges,
			Evidence: fmt.Sprintf("%.0f leader changes %s; WAL fdatasync p99 %s, heartbeat failures %s", m.LeaderChanges, during(ev), dur(m.WALFsync.P99), count(m.HeartbeatFailures)),
			Advice:   adviceElection,
		})
	}
	if ev.SinceStart() {
		// The first election after start counts as a change on every
		// member: since start, only more than one is news.
		var kept []Finding
		for _, f := range out {
			if f.Value > 1 {
				kept = append(kept, f)
			}
		}
		out = kept
	}
	if n := ev.Logs.Count(KindElection); n > 0 && (len(ev.Logs.Terms) > 1 || ev.Logs.LostLeader > 0) {
		ks := ev.Logs.Kinds[KindElection]
		busiest, bn := time.Time{}, 0
		for m, c := range ks.PerMinute {
			if c > bn || (c == bn && m.Before(busiest)) {
				busiest, bn = m, c
			}
		}
		out = append(out, Finding{
			Member: "logs", Status: verdict.Fail, Value: float64(len(ev.Logs.Terms)), Advice: adviceElection,
			Threshold: verdict.Threshold{ID: "log_election_terms", Title: "raft terms with an election in the log", Limit: 2, Unit: "count",
				Source: "etcd raft logs \"became leader\" / \"elected leader\" at each election: one term is the election at start, a second means the leader changed"},
			Evidence: fmt.Sprintf("elections in %d terms and %d \"lost leader\" lines (%d election lines in %d minute(s), at most %d in the minute of %s)",
				len(ev.Logs.Terms), ev.Logs.LostLeader, n, len(ks.PerMinute), bn, stamp(busiest)),
		})
	}
	return out
}

func checkFailedProposals(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		if !over(m.ProposalsFailed, th.ProposalsFailed) {
			continue
		}
		out = append(out, Finding{
			Member: m.Name, Status: verdict.Warn, Threshold: th.ProposalsFailed, Value: m.ProposalsFailed,
			Evidence: fmt.Sprintf("%.0f failed proposals %s (%s committed), %s leader changes", m.ProposalsFailed, during(ev), count(m.ProposalsCommitted), count(m.LeaderChanges)),
			Advice:   adviceRequests,
		})
	}
	return out
}

func checkGRPC(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		failed, total := m.GRPCErrors()
		if !(total > 0) {
			continue
		}
		r := failed / total
		if !over(r, th.GRPCErrors) {
			continue
		}
		var codes []string
		for _, c := range sortedKeys(m.GRPCByCode) {
			if c != "OK" && m.GRPCByCode[c] > 0 {
				codes = append(codes, fmt.Sprintf("%s %.0f", c, m.GRPCByCode[c]))
			}
		}
		out = append(out, Finding{
			Member: m.Name, Status: verdict.Warn, Threshold: th.GRPCErrors, Value: r,
			Evidence: fmt.Sprintf("%.0f of %.0f gRPC requests failed %s (%.1f %%): %s", failed, total, during(ev), 100*r, strings.Join(codes, ", ")),
			Advice:   adviceRequests,
		})
	}
	return out
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "no timestamp"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func checkCompaction(ev Evidence, th verdict.DiagnoseThresholds) []Finding {
	var out []Finding
	for _, m := range ev.Members {
		slow, defrag := over(m.CompactionPauseP99, th.CompactionPause), ok(m.Defrags) && m.Defrags > 0 && !ev.SinceStart()
		if !slow && !defrag {
			continue
		}
		f := Finding{
			Member: m.Name, Status: verdict.Warn, Threshold: th.CompactionPause, Value: m.CompactionPauseP99,
			Evidence: fmt.Sprintf("compaction pause p99 %s and %s defragmentation(s) %s; backend commit p99 %s, apply p99 %s",
				dur(m.CompactionPauseP99), count(m.Defrags), during(ev), dur(m.BackendCommit.P99), dur(m.Apply.P99)),
			Advice: "compact more often in smaller steps (--auto-compaction-mode/--auto-compaction-retention, or a smaller compaction batch) and defragment off-peak, one member at a time",
		}
		if !slow {
			f.Value = math.NaN()
		}
		out = append(out, f)
	}
	return out
}

func checkSlowRequests(ev Evidence, _ verdict.DiagnoseThresholds) []Finding {
	n := ev.Logs.Count(KindSlowRequest)
	if n == 0 {
		return nil
	}
	w := ev.Logs.Kinds[KindSlowRequest].Worst
	also := "with no slow fdatasync or apply logged: expensive requests (large ranges, big transactions) or an overloaded member"
	if ev.Logs.Count(KindSlowFdatasync) > 0 || ev.Logs.Count(KindSlowApply) > 0 {
		also = "a symptom of the slow syncs or applies found beside it"
	}
	return []Finding{{
		Member: "logs", Status: verdict.Warn, Value: float64(n),
		Threshold: logThreshold("log_slow_requests", "\"took too long\" / \"request stats\" log lines", "etcd logs requests over 100 ms (--warning-apply-duration, warning-unary-request-duration)"),
		Evidence:  fmt.Sprintf("%d requests took too long, the worst %v (%s), %s: %s", n, w.Took.Round(time.Millisecond), stamp(w.Time), also, w.Line),
		Advice:    "find the slow requests' keys and sizes in the lines above (ranges over many keys, large values, --limit missing in clients) and check the disk with 'etcdbench diagnose metrics' and 'etcdbench disk wal'",
	}}
}
