package data

import (
	"context"
	"fmt"
	"net/url"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/diagnose/data/memory"
	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// probeMax bounds the probe's listed bytes: larger resources scale its
// factors.
const probeMax = 64 << 20

// listMemory predicts what LISTs of each resource cost the member's
// memory, from a probe on cfg.Dir with objects of the largest resource's
// mean size, against the member's limit: cfg's, its cgroup's when its
// endpoint is served on this machine, else the machine's. The member's
// idle memory is what it says (lv) or reads on this machine, else the
// probe's member's beside the db.
func listMemory(ctx context.Context, cfg Config, a *Analysis, d *result.Data, lv live) (*result.DataMemory, error) {
	var largest *Resource
	for i := range a.Resources {
		if largest == nil || a.Resources[i].Bytes > largest.Bytes {
			largest = &a.Resources[i]
		}
	}
	if largest == nil || largest.Bytes == 0 || largest.Keys == 0 {
		return nil, nil
	}
	p, err := memory.RunProbe(ctx, cfg.Dir, max(largest.Bytes/largest.Keys, 64), min(largest.Bytes, probeMax))
	if err != nil {
		return nil, err
	}
	for i := range d.Resources {
		r := &d.Resources[i]
		r.ListMemoryBytes, r.ListMemoryPagedBytes = p.Full(r.Bytes), p.Paged(r.Bytes, r.Keys)
	}
	pid := 0
	if len(cfg.Endpoints) > 0 {
		if u, err := url.Parse(cfg.Endpoints[0]); err == nil {
			pid, _ = sysinfo.ListeningPID("/proc", u.Host)
		}
	}
	m := &result.DataMemory{Resource: largest.Name, PerListedByte: p.PerByte, PerListedByteConcurrent: p.PerByteConcurrent,
		PagedPerListedByte: p.PagedPerByte, ProbeFrom: p.From()}
	switch l := memory.LimitOf("/", pid); {
	case cfg.MemoryLimit > 0:
		m.LimitBytes, m.LimitFrom = cfg.MemoryLimit, "--memory-limit"
	case pid > 0:
		m.LimitBytes, m.LimitFrom = l.Bytes, l.From
	default:
		m.LimitBytes, m.LimitFrom = l.Bytes, l.From+" (the member does not run on this machine, or not yet: give its limit with --memory-limit)"
	}
	rss, rerr := memory.RSS("/", pid)
	switch {
	case lv.resident > 0:
		m.IdleBytes, m.IdleFrom = lv.resident, "the member's process_resident_memory_bytes"
	case pid > 0 && rerr == nil:
		m.IdleBytes, m.IdleFrom = rss, "the member's VmRSS"
	default:
		m.IdleBytes = p.Baseline() + d.DB.FileBytes
		m.IdleFrom = fmt.Sprintf("predicted: the probe's member's own %s beside its mapped db, and this db's %s (bbolt maps it whole)",
			units.FormatBytes(p.Baseline()), units.FormatBytes(d.DB.FileBytes))
	}
	m.FullListPeakBytes = m.IdleBytes + p.Full(largest.Bytes)
	m.ConcurrentFullLists = -1
	if m.LimitBytes > 0 {
		m.ConcurrentFullLists = p.Fits(largest.Bytes, m.IdleBytes, m.LimitBytes)
	}
	return m, nil
}

// adviceLists says what keeps LISTs from taking a member past its limit.
const adviceLists = "page LISTs (kube-apiserver pages its own, 500 objects at a time; clients: --chunk-size, limit=500), serve them from kube-apiserver's watch cache " +
	"(on by default; resourceVersion=0 or, from Kubernetes 1.31, consistent reads from cache), keep objects small, " +
	"compact and defragment so that the member's mapped db is small, or raise the member's memory limit"

// judgeMemory judges what full LISTs of the largest resource leave of
// the member's memory limit.
func judgeMemory(m *result.DataMemory, th Thresholds, source string) []diagnose.Finding {
	if m == nil || m.LimitBytes <= 0 || m.ConcurrentFullLists < 0 {
		return nil
	}
	t := th.ConcurrentLists
	status := verdict.Pass
	var evidence string
	switch {
	case m.IdleBytes >= m.LimitBytes:
		status = verdict.Fail
		evidence = fmt.Sprintf("the member holds %s (%s) before any LIST, at or over its %s limit (%s)",
			units.FormatBytes(m.IdleBytes), m.IdleFrom, units.FormatBytes(m.LimitBytes), m.LimitFrom)
	case m.ConcurrentFullLists < 1:
		status = verdict.Fail
		evidence = fmt.Sprintf("one full LIST of %s would take the member from %s to %s, over its %s limit (%s)",
			m.Resource, units.FormatBytes(m.IdleBytes), units.FormatBytes(m.FullListPeakBytes), units.FormatBytes(m.LimitBytes), m.LimitFrom)
	case float64(m.ConcurrentFullLists) < t.Limit:
		status = verdict.Warn
		evidence = fmt.Sprintf("%d full LISTs of %s at once fit between the member's %s and its %s limit (%s): one more and it is OOM-killed",
			m.ConcurrentFullLists, m.Resource, units.FormatBytes(m.IdleBytes), units.FormatBytes(m.LimitBytes), m.LimitFrom)
	default:
		return nil
	}
	r := rule("list-memory")
	f := diagnose.Finding{Rule: r, Member: source, Status: status, Threshold: t, Value: float64(m.ConcurrentFullLists), Evidence: evidence, Advice: adviceLists}
	f.Kind = r.Kind
	f.Facts = []finding.Fact{{Name: t.ID, Value: float64(m.ConcurrentFullLists), Unit: t.Unit, Limit: t.Limit}}
	return []diagnose.Finding{f}
}
