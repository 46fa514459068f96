package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"etcdbench/bench/internal/cmp"
)

// runner runs the two tools on one directory with one recipe.
type runner struct {
	fio       string // fio executable
	etcdbench string // etcdbench executable
	dir       string // directory under test
	bs, size  string // passed to both tools as given
}

// runFio runs fio's recipe in a fresh subdirectory of the directory under
// test and removes it (and fio's file, which fio leaves behind) afterwards;
// tool names the run (fio, or the control). json+ adds fio's whole latency
// histogram to the report, for the pooled comparison; the percentiles are
// computed from the same histogram either way.
func (r runner) runFio(ctx context.Context, tool string) (m measurement, raw json.RawMessage, err error) {
	sub, done, err := cmp.TempSub(r.dir, "walvsfio-fio-")
	if err != nil {
		return m, nil, err
	}
	defer done(&err)
	c, err := cmp.RunChild(ctx, nil, r.fio,
		"--name=walvsfio", "--directory="+sub,
		"--rw=write", "--ioengine=sync", "--fdatasync=1",
		"--bs="+r.bs, "--size="+r.size, "--output-format=json+")
	if err != nil {
		return m, nil, err
	}
	res, err := parseFio(c.Stdout)
	if err != nil {
		return m, nil, err
	}
	t := res.Total()
	m = measurement{Tool: tool, Syncs: t.Syncs, P50: t.P50, P99: t.P99, Wall: c.Wall, CPU: c.CPU, User: c.User, Sys: c.Sys, dist: res.Dist}
	var rt struct {
		Jobs []struct {
			Runtime int64 `json:"job_runtime"` // ms
		} `json:"jobs"`
	}
	if cmp.DecodeFirst(c.Stdout, &rt) == nil && len(rt.Jobs) > 0 {
		m.Runtime = time.Duration(rt.Jobs[0].Runtime) * time.Millisecond
	}
	return m, cmp.RawJSON(c.Stdout), nil
}

// runEtcdbench runs `etcdbench disk wal` on the directory under test:
// fio's recipe when adaptive is false, its adaptive stop otherwise.
// etcdbench creates and removes its own scratch directory there.
func (r runner) runEtcdbench(ctx context.Context, adaptive bool) (measurement, json.RawMessage, error) {
	args := []string{"disk", "wal", "--dir", r.dir, "--bs", r.bs, "-o", "json", "--no-progress"}
	tool := toolAdaptive
	if !adaptive {
		args = append(args, "--size", r.size)
		tool = toolEtcd
	}
	// Exit 1 means a verdict failed: the report is complete and still counts.
	c, err := cmp.RunChild(ctx, []int{1}, r.etcdbench, args...)
	if err != nil {
		return measurement{}, nil, err
	}
	res, err := parseEtcdbench(c.Stdout)
	if err != nil {
		return measurement{}, nil, fmt.Errorf("%w%s", err, cmp.Tail(c.Stderr))
	}
	m := measurement{Tool: tool, Syncs: res.Syncs, P50: res.P50, P99: res.P99,
		Wall: c.Wall, Runtime: res.Duration, CPU: c.CPU, User: c.User, Sys: c.Sys, Stop: res.StopReason, dist: res.Dist}
	return m, cmp.RawJSON(c.Stdout), nil
}
