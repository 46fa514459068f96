package cluster

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// ErrUnreachable is returned with the report when a member did not
// answer (or is not etcd); the report still holds the others in full.
var ErrUnreachable = errors.New("a member did not answer")

// ErrNoMember is returned, without a report, when no endpoint answered
// as etcd.
var ErrNoMember = errors.New("no endpoint answered as etcd")

// Run asks every member at once and returns the report. With a member
// that did not answer it returns the report and an error wrapping
// ErrUnreachable; when none answered, no report and one line per
// endpoint (a usage error when each was a wrong endpoint or a TLS
// mismatch). It ends within the window plus two deadlines, however many
// members are slow.
func Run(ctx context.Context, cfg Config) (*result.Result, error) {
	var logs *diagnose.LogSummary
	if cfg.Logs != "" {
		var err error
		if logs, err = diagnose.ReadLogFile(cfg.Logs, nil); err != nil {
			return nil, err
		}
	}
	res := run.NewResult(cfg.Args)
	probes := make([]*probe, len(cfg.Endpoints))
	for i, ep := range cfg.Endpoints {
		probes[i] = &probe{endpoint: ep}
	}
	defer func() {
		for _, p := range probes {
			if p.cli != nil {
				_ = p.cli.Close()
			}
		}
	}()
	// The metrics end within the window and a deadline (a scrape each
	// side); the questions get the window and a deadline too, however
	// many of them a slow member makes wait, and the hashes one more.
	start := time.Now()
	askCtx, cancelAsk := context.WithDeadline(ctx, start.Add(cfg.Window+cfg.Timeout))
	defer cancelAsk()
	hashCtx, cancelHash := context.WithDeadline(ctx, start.Add(cfg.Window+2*cfg.Timeout))
	defer cancelHash()
	var sc scrapes
	var wg sync.WaitGroup
	wg.Go(func() { sc = collect(ctx, cfg) })
	var pw sync.WaitGroup
	for _, p := range probes {
		pw.Go(func() { p.run(askCtx, cfg) })
	}
	pw.Wait()
	hashAll(hashCtx, cfg, probes)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := noneAnswered(probes); err != nil {
		return nil, err
	}

	v := newView(probes)
	v.timeouts = make([]*timeouts, len(probes))
	for i, p := range probes {
		if t, ok := memberTimeouts("/proc", p.endpoint); ok {
			v.timeouts[i] = &t
		}
	}
	ev, idx := sc.evidence(float64(runtime.NumCPU()))
	ev.Logs = logs
	v.quotas = make([]int64, len(probes))
	resident := make([]int64, len(probes))
	for k, m := range ev.Members {
		if m.Quota > 0 {
			v.quotas[idx[k]] = int64(m.Quota)
		}
		if m.Resident > 0 {
			resident[idx[k]] = int64(m.Resident)
		}
	}
	v.memory = make([]*memberMemory, len(probes))
	for i, p := range probes {
		v.memory[i] = memberMemoryOf("/", p.endpoint, resident[i])
	}
	if logs != nil {
		ev.Notes = append(ev.Notes, logs.Notes()...)
	}
	v.peerRTTs(ev, idx)
	ev.Notes = append(ev.Notes, ownSlowApplies(&ev, idx, probes, v.labels)...)
	metricRules := diagnose.Rules()
	fs := diagnose.Diagnose(ev, verdict.DiagnoseDefaults(), metricRules)
	for i := range fs {
		fs[i].Member = relabel(fs[i].Member, v.labels)
	}
	v.networkApplies(fs)
	rules := Rules()
	th := DefaultThresholds()
	if cfg.Thresholds != nil {
		th = *cfg.Thresholds
	}
	fs = append(fs, v.check(rules, th)...)
	diagnose.Rank(fs)

	w := diagnose.Workload("diagnose-cluster", ev, fs, metricRules)
	w.Description = fmt.Sprintf("a live cluster's health: every member's status, member list, alarms, reads and key-space hash, and its /metrics over %v", sc.window)
	w.Parameters["rules"] = len(metricRules) + len(rules)
	w.Parameters["endpoints"] = cfg.Endpoints
	w.Parameters["timeout_ns"] = int64(cfg.Timeout)
	w.Parameters["reads"] = cfg.Reads
	if cfg.Logs != "" {
		w.Parameters["log"] = cfg.Logs
	}
	w.Cluster = v.result(fs, cfg.Timeout)
	w.Figures = append(w.Figures, v.figures()...)
	w.Latencies = append(w.Latencies, v.latencies()...)
	w.Notes = append(v.notes(sc, idx), w.Notes...)
	w.Notes = append(w.Notes, "the environment describes the machine etcdbench ran on, not the members")
	res.Environment = sysinfo.Collect("/", ".")
	res.Workloads = []result.Workload{w}
	res.Finish(time.Now().UTC())
	var down []string
	for i, p := range probes {
		if p.failure != "" {
			down = append(down, v.labels[i]+": "+p.reason)
		}
	}
	if len(down) > 0 {
		return res, fmt.Errorf("%w: %s", ErrUnreachable, strings.Join(down, "; "))
	}
	return res, nil
}

// hashAll asks every member that answered for the hash of its key space
// at the lowest revision among them, which every one of them has
// reached (a member that lags is allowed for).
func hashAll(ctx context.Context, cfg Config, probes []*probe) {
	var rev int64
	for _, p := range probes {
		if p.status != nil && (rev == 0 || p.status.Header.Revision < rev) {
			rev = p.status.Header.Revision
		}
	}
	if rev == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, p := range probes {
		if p.status != nil {
			wg.Go(func() { p.hashAt(ctx, cfg.Timeout, rev) })
		}
	}
	wg.Wait()
}

// noneAnswered is the error when no endpoint answered as etcd: one line
// per endpoint, a usage error when every one was a wrong endpoint or a
// TLS mismatch.
func noneAnswered(probes []*probe) error {
	usage := true
	var lines []string
	for _, p := range probes {
		if p.failure == "" {
			return nil
		}
		usage = usage && (p.failure == WrongEndpoint || p.failure == TLSMismatch)
		lines = append(lines, p.endpoint+": "+p.reason)
	}
	if len(probes) == 0 {
		return run.Usagef("no endpoints: give --endpoints URL,URL,...")
	}
	err := fmt.Errorf("%w: %s", ErrNoMember, strings.Join(lines, "; "))
	if usage {
		return run.Usage(err)
	}
	return err
}

// relabel names a metrics finding's member ("member1") by its name and
// endpoint.
func relabel(member string, labels []string) string {
	var i int
	if _, err := fmt.Sscanf(member, "member%d", &i); err == nil && i >= 0 && i < len(labels) {
		return labels[i]
	}
	return member
}
