package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// Diagnose runs every rule over ev and returns the findings ranked: FAIL
// before WARN, then causes before symptoms (Rule.Rank), then the furthest
// over its limit first.
func Diagnose(ev Evidence, th verdict.DiagnoseThresholds, rules []*Rule) []Finding {
	var out []Finding
	for _, r := range rules {
		for _, f := range r.Check(ev, th) {
			f.Rule = r
			f.Kind = r.Kind
			f.Facts = []finding.Fact{{Name: f.Threshold.ID, Value: f.Value, Unit: f.Threshold.Unit, Limit: f.Threshold.Limit}}
			out = append(out, f)
		}
	}
	Rank(out)
	return out
}

// Rank orders findings as Diagnose does: FAIL before WARN, then causes
// before symptoms (Rule.Rank), then the furthest over its limit first.
// Findings of other rules (a live cluster's status) are ranked with the
// metrics' this way.
func Rank(out []Finding) {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Status != b.Status {
			return a.Status > b.Status
		}
		if a.Rule.Rank != b.Rule.Rank {
			return a.Rule.Rank < b.Rule.Rank
		}
		return a.severity() > b.severity()
	})
}

// healthy is the verdict when no rule fires.
var healthy = verdict.Threshold{
	ID: "healthy", Title: "no cause of slowness found", Unit: "count",
	Source: "etcdbench diagnose rules (docs/diagnose.md)",
}

// Verdicts turns ranked findings into verdicts, the first being the top
// cause; without findings, one PASS verdict says the member(s) look
// healthy and what that rests on.
func Verdicts(ev Evidence, fs []Finding, rules []*Rule) []verdict.Verdict {
	if len(fs) == 0 {
		return []verdict.Verdict{{
			Check: healthy.ID, Title: "healthy: " + healthy.Title, Status: verdict.Pass, Value: 0, Unit: healthy.Unit,
			Limit: 0, Comparison: "<=", Source: healthy.Source,
			Detail: fmt.Sprintf("none of the %d rules fired %s: %s", len(rules), scope(ev), healthyBasis(ev)),
		}}
	}
	vs := make([]verdict.Verdict, len(fs))
	for i, f := range fs {
		cmp := "<"
		if f.Threshold.ID == "db_fragmentation" || f.Threshold.ID == "has_leader" {
			cmp = ">="
		}
		vs[i] = verdict.Verdict{
			Check:  f.Rule.ID,
			Title:  fmt.Sprintf("#%d %s: %s (%s)", i+1, f.Kind.Info().Name, f.Rule.Title, f.Member),
			Status: f.Status, Value: f.Value, Unit: f.Threshold.Unit, Limit: f.Threshold.Limit, Comparison: cmp,
			Source: f.Threshold.Source + "; rule: " + f.Rule.Source,
			Detail: f.Evidence + ". What to do: " + f.Advice + ".",
		}
	}
	return vs
}

func scope(ev Evidence) string {
	switch {
	case len(ev.Members) == 0:
		return "on the logs"
	case ev.SinceStart():
		return "on the figures since each process started"
	}
	return "in the " + ev.Window.String() + " window"
}

// healthyBasis says what a healthy verdict rests on.
func healthyBasis(ev Evidence) string {
	var parts []string
	for _, m := range ev.Members {
		parts = append(parts, fmt.Sprintf("%s WAL fdatasync p99 %s over %s syncs, backend commit p99 %s", m.Name, dur(m.WALFsync.P99), count(m.WALFsync.Count), dur(m.BackendCommit.P99)))
	}
	if ev.Logs != nil {
		parts = append(parts, fmt.Sprintf("%d log lines with %d slow-operation or election events", ev.Logs.Lines, ev.Logs.Recognised))
	}
	return strings.Join(parts, "; ")
}

// Workload renders a diagnosis through the result model: figures per
// member (and per log event kind), a verdict per finding in rank order,
// and the evidence notes. name is e.g. "diagnose-metrics".
func Workload(name string, ev Evidence, fs []Finding, rules []*Rule) result.Workload {
	w := result.Workload{
		Name:       name,
		Parameters: map[string]any{"rules": len(rules)},
		Stop:       result.Stop{Mode: "time"},
		DurationNs: int64(ev.Window),
		Verdicts:   Verdicts(ev, fs, rules),
		Notes:      append([]string(nil), ev.Notes...),
	}
	switch {
	case len(ev.Members) > 0 && ev.SinceStart():
		w.Description = "causes of slowness from one saved scrape of etcd's /metrics, counting since each process started"
		w.Stop.Reason = "one scrape: every figure counts since the process started, not just now"
		w.Parameters["since_start"] = true
	case len(ev.Members) > 0:
		w.Description = fmt.Sprintf("causes of slowness from the difference of two /metrics scrapes %v apart", ev.Window)
		w.Stop.Reason = "the --window between the two scrapes ended"
		w.Parameters["window_s"] = ev.Window.Seconds()
	default:
		w.Description = "causes of slowness from etcd's logs"
		w.Stop.Reason = "the end of the log"
	}
	var sources []string
	for _, m := range ev.Members {
		sources = append(sources, m.Name+"="+m.Source)
		w.Figures = append(w.Figures, memberFigures(m, ev.Window)...)
	}
	if len(sources) > 0 {
		w.Parameters["members"] = sources
	}
	if ev.Logs != nil {
		w.Figures = append(w.Figures, logFigures(ev.Logs)...)
		w.Notes = append(w.Notes, logNotes(ev.Logs)...)
	}
	return w
}

// figure appends a figure unless v is missing.
func figure(out []result.Figure, name string, v float64, unit, desc string) []result.Figure {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return out
	}
	return append(out, result.Figure{Name: name, Value: v, Unit: unit, Description: desc})
}

func memberFigures(m Member, window time.Duration) []result.Figure {
	var out []result.Figure
	p := m.Name + "_"
	for _, h := range []struct {
		id, what, many string
		q              Quantiles
	}{{"wal_fsync", "WAL fdatasync", "WAL fdatasyncs", m.WALFsync}, {"backend_commit", "backend commit", "backend commits", m.BackendCommit}, {"apply", "apply", "applies", m.Apply}} {
		out = figure(out, p+h.id+"_count", h.q.Count, "count", h.many+" counted (etcd's histogram)")
		out = figure(out, p+h.id+"_p50", h.q.P50, "s", h.what+" p50 (interpolated as histogram_quantile does)")
		out = figure(out, p+h.id+"_p99", h.q.P99, "s", h.what+" p99 (interpolated as histogram_quantile does)")
	}
	out = figure(out, p+"slow_applies", m.SlowApplies, "count", "applies over 100 ms (etcd_server_slow_apply_total)")
	out = figure(out, p+"heartbeat_send_failures", m.HeartbeatFailures, "count", "heartbeats the leader failed to send on time")
	out = figure(out, p+"leader_changes", m.LeaderChanges, "count", "leader changes seen")
	out = figure(out, p+"has_leader", m.HasLeader, "count", "1 when the member has a leader")
	out = figure(out, p+"proposals_committed", m.ProposalsCommitted, "count", "raft proposals committed")
	out = figure(out, p+"proposals_failed", m.ProposalsFailed, "count", "raft proposals failed")
	out = figure(out, p+"proposals_pending", m.ProposalsPending, "count", "raft proposals pending at the end")
	for _, peer := range sortedKeys(m.PeerRTTP99) {
		out = figure(out, p+"peer_rtt_p99_"+peer, m.PeerRTTP99[peer], "s", fmt.Sprintf("round-trip time p99 to peer %s (%.0f round trips)", peer, m.PeerRTTCount[peer]))
	}
	out = figure(out, p+"db_size", m.DBSize, "B", "backend db file size")
	out = figure(out, p+"db_in_use", m.DBInUse, "B", "backend db bytes in use (the rest are free pages)")
	out = figure(out, p+"quota", m.Quota, "B", "--quota-backend-bytes")
	if m.Quota > 0 {
		out = figure(out, p+"db_quota_ratio", m.DBSize/m.Quota, "ratio", "db file size / quota")
	}
	if m.DBSize > 0 {
		out = figure(out, p+"db_in_use_ratio", m.DBInUse/m.DBSize, "ratio", "in use / db file size (low: fragmented)")
	}
	out = figure(out, p+"compaction_pause_p99", m.CompactionPauseP99, "s", "compaction pause p99 (etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds)")
	out = figure(out, p+"defrags", m.Defrags, "count", "defragmentations")
	out = figure(out, p+"cpu_seconds", m.CPUSeconds, "s", "process CPU time")
	out = figure(out, p+"cpu_busy", m.CPUBusy(window), "ratio", "process CPU per core over the window ("+m.CoresFrom+")")
	out = figure(out, p+"resident_memory", m.Resident, "B", "process resident memory")
	out = figure(out, p+"gc_count", m.GCs, "count", "Go garbage collections")
	out = figure(out, p+"gc_pause_seconds", m.GCSeconds, "s", "Go GC stop-the-world pauses, total")
	if failed, total := m.GRPCErrors(); m.GRPCByCode != nil {
		out = figure(out, p+"grpc_requests", total, "count", "gRPC requests handled")
		out = figure(out, p+"grpc_failed", failed, "count", "gRPC requests failed ("+strings.Join(grpcErrorCodes, ", ")+")")
	}
	return out
}

func logFigures(s *LogSummary) []result.Figure {
	out := []result.Figure{
		{Name: "log_lines", Value: float64(s.Lines), Unit: "count", Description: "log lines read"},
	}
	for _, k := range Kinds {
		ks := s.Kinds[k]
		if ks == nil {
			out = append(out, result.Figure{Name: "log_" + string(k), Value: 0, Unit: "count", Description: kindWords[k]})
			continue
		}
		out = append(out, result.Figure{Name: "log_" + string(k), Value: float64(ks.Count), Unit: "count", Description: kindWords[k]})
		if ks.Worst.Took > 0 {
			out = append(out, result.Figure{Name: "log_" + string(k) + "_worst", Value: ks.Worst.Took.Seconds(), Unit: "s", Description: "the longest " + kindWords[k]})
		}
	}
	return out
}

// kindWords describe each kind for figures and notes.
var kindWords = map[Kind]string{
	KindSlowFdatasync: "\"slow fdatasync\" (a WAL sync over 1 s)",
	KindSlowApply:     "\"apply request took too long\" (over 100 ms)",
	KindHeartbeatLate: "\"leader failed to send out heartbeat on time\"",
	KindSlowRequest:   "other \"took too long\" / \"request stats\" lines",
	KindElection:      "elections (lost leader, elected leader, became leader)",
	KindSpaceExceeded: "\"database space exceeded\"",
}

// logNotes show the worst line of each kind and the events per minute.
func logNotes(s *LogSummary) []string {
	var out []string
	formats := sortedKeys(s.Formats)
	var fw []string
	for _, f := range formats {
		fw = append(fw, fmt.Sprintf("%s %d", f, s.Formats[f]))
	}
	span := "no timestamps"
	if !s.First.IsZero() {
		span = stamp(s.First) + " to " + stamp(s.Last)
	}
	out = append(out, fmt.Sprintf("log: %d lines (%s), %s", s.Lines, strings.Join(fw, ", "), span))
	for _, k := range Kinds {
		ks := s.Kinds[k]
		if ks == nil {
			continue
		}
		took := ""
		if ks.Worst.Took > 0 {
			took = fmt.Sprintf(", took %v", ks.Worst.Took.Round(time.Millisecond))
		}
		out = append(out, fmt.Sprintf("log worst %s (%d in all): %s%s: %s", k, ks.Count, stamp(ks.Worst.Time), took, ks.Worst.Line))
	}
	minutes := s.Minutes()
	if len(minutes) > maxMinuteNotes {
		minutes = busiest(s, minutes, maxMinuteNotes)
		out = append(out, fmt.Sprintf("log: events in %d minutes; the %d busiest are listed, the counts above cover all", len(s.Minutes()), maxMinuteNotes))
	}
	for _, m := range minutes {
		var parts []string
		for _, k := range Kinds {
			if ks := s.Kinds[k]; ks != nil && ks.PerMinute[m] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, ks.PerMinute[m]))
			}
		}
		out = append(out, "log minute "+m.Format("2006-01-02 15:04")+": "+strings.Join(parts, ", "))
	}
	return out
}

// maxMinuteNotes bounds the per-minute notes of a long log.
const maxMinuteNotes = 60

// busiest returns the n minutes with the most events, in time order.
func busiest(s *LogSummary, minutes []time.Time, n int) []time.Time {
	total := func(m time.Time) int {
		c := 0
		for _, ks := range s.Kinds {
			c += ks.PerMinute[m]
		}
		return c
	}
	ms := append([]time.Time(nil), minutes...)
	sort.SliceStable(ms, func(i, j int) bool { return total(ms[i]) > total(ms[j]) })
	ms = ms[:n]
	sort.Slice(ms, func(i, j int) bool { return ms[i].Before(ms[j]) })
	return ms
}
