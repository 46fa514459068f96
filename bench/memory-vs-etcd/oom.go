package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/units"
)

// oomCheck is one member run under a memory limit: the limit, what
// diagnose data predicted of the member in its cgroup, and k = 1, 2, ...
// full LISTs at once, each on the member freshly started in it, until
// the kernel killed it.
type oomCheck struct {
	Etcd   string `json:"etcd"`
	Target string `json:"target"`
	// LimitBytes is the cgroup's memory.limit_in_bytes (and its
	// memory.memsw.limit_in_bytes when Memsw): idle + Lists x one LIST's
	// predicted cost in the member's round 1.
	LimitBytes int64   `json:"limit_bytes"`
	Memsw      bool    `json:"memsw"`
	Lists      float64 `json:"lists"`
	// ReadLimit and ReadFrom are the limit diagnose data read of the
	// member in the cgroup by itself (it is never told the limit: its
	// prediction is compared whatever it read).
	ReadLimit int64        `json:"read_limit_bytes"`
	ReadFrom  string       `json:"read_limit_from"`
	Predicted prediction   `json:"predicted"` // diagnose data on the member in the cgroup
	Steps     []caseResult `json:"steps"`
	// OOMK is the first k whose LISTs the member did not survive (0:
	// it survived every k up to MaxK).
	OOMK int     `json:"oom_k"`
	MaxK int     `json:"max_k"`
	Load float64 `json:"load_average"`
}

// limitFor is the memory limit for a member's OOM check from base, its
// first round's prediction: its idle memory and lists times what each
// full LIST adds when several run at once (at least what one adds
// alone), page-aligned. With lists = 2.5 the model says that 2 fit.
func limitFor(base prediction, lists float64) int64 {
	room := max(base.over(listCase{K: 1}), lists*base.Memory.PerListedByteConcurrent*float64(base.Bytes))
	return (base.Memory.IdleBytes + int64(room)) &^ 4095
}

// checkOOM runs m's OOM check (see oomCheck) in a cgroup of its own,
// removed on every way out.
func checkOOM(ctx context.Context, m *member, base prediction, o options, etcdbench, dir string, stderr io.Writer) (oc oomCheck, err error) {
	oc = oomCheck{Etcd: m.kind.Name, Target: m.target, Lists: o.OOMLists, MaxK: o.MaxK}
	oc.Load, _ = cmp.LoadAverage()
	oc.LimitBytes = limitFor(base, o.OOMLists)
	cg, err := newMemCgroup(m.kind.Slug+"-"+cmp.Slug(m.target), oc.LimitBytes)
	if err != nil {
		return oc, err
	}
	defer func() { err = errors.Join(err, m.stop(), cg.remove()) }()
	oc.Memsw = cg.memsw
	if err := evict(m.dataDir); err != nil {
		return oc, err
	}
	if err := m.start(ctx, cg.wrap); err != nil {
		return oc, fmt.Errorf("starting the member under a %s limit: %w", units.FormatBytes(oc.LimitBytes), err)
	}
	settle(ctx, o.Settle)
	p, err := diagnose(ctx, etcdbench, m.client, dir)
	oc.Predicted, oc.ReadLimit, oc.ReadFrom = p, p.Memory.LimitBytes, p.Memory.LimitFrom
	fmt.Fprintf(stderr, "%s %s under a %s limit (memsw %v): diagnose data read %s from %s, idle %s: %d full LISTs of %s fit\n", oc.Etcd, oc.Target,
		units.FormatBytes(oc.LimitBytes), oc.Memsw, units.FormatBytes(p.Memory.LimitBytes), p.Memory.LimitFrom, units.FormatBytes(p.Memory.IdleBytes),
		p.Memory.ConcurrentFullLists, p.Resource)
	if err == nil && !oc.limitFound() {
		fmt.Fprintf(stderr, "  that is not the cgroup's limit (%d bytes): the check compares its prediction all the same\n", oc.LimitBytes)
	}
	if err = errors.Join(err, m.stop()); err != nil {
		return oc, err
	}
	for k := 1; k <= o.MaxK; k++ {
		r, err := runCase(ctx, m, p, listCase{K: k}, o.Settle, o.Client, cg)
		oc.Steps = append(oc.Steps, r)
		if err != nil {
			return oc, fmt.Errorf("%d full LISTs under the limit: %w", k, err)
		}
		fmt.Fprintf(stderr, "  %d full LISTs: idle %s (cgroup %s), peak %s (anon %s, cgroup %s)%s%s\n", k, units.FormatBytes(r.Idle.RSS),
			units.FormatBytes(r.IdleCgroup), units.FormatBytes(r.Peak.RSS), units.FormatBytes(r.PeakAnon), units.FormatBytes(r.PeakCgroup),
			killedNote(r), errNote(r.Errs))
		if r.Killed != "" {
			oc.OOMK = k
			break
		}
	}
	return oc, nil
}

// limitFound says whether diagnose data read the cgroup's limit by itself.
func (oc oomCheck) limitFound() bool {
	return oc.ReadLimit == oc.LimitBytes && strings.HasPrefix(oc.ReadFrom, "cgroup v1")
}

func killedNote(r caseResult) string {
	if r.Killed == "" {
		return ", survived"
	}
	return fmt.Sprintf(", the member ended (%s; the cgroup's oom_kill count +%d)", r.Killed, r.OOMKills)
}
