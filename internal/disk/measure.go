package disk

import (
	"context"
	"fmt"
	"io"

	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// Suite is one validated run of disk workloads.
type Suite struct {
	// Dir is the directory under test; the workloads run in a scratch
	// directory inside it.
	Dir        string
	Workloads  []Named
	Thresholds verdict.Thresholds
	// Progress is the terminal for the live line, or nil.
	Progress io.Writer
	Args     []string
	// SpaceHint says what to do when the free space is too small.
	SpaceHint string
}

// Measure checks the directory and free space, runs the workloads in a
// scratch directory and judges them. The scratch directory is removed
// before it returns, on every path. An interrupted run returns its partial
// result with the context's error; a run that failed otherwise returns
// only its error.
func Measure(ctx context.Context, s Suite) (res *result.Result, err error) {
	r, err := run.Open(s.Dir, SpaceNeeded(s.Workloads), s.SpaceHint, s.Args)
	if err != nil {
		return nil, err
	}
	defer r.Close(&err)
	prog := run.NewProgress(s.Progress, len(s.Workloads))
	env := Env{Dir: r.Scratch.Path, Root: "/", Facts: r.Result.Environment, Thresholds: s.Thresholds, OnSecond: ShowOn(prog)}
	wls, _, err := RunSuite(ctx, env, s.Workloads, prog.Start)
	prog.Clear()
	if err != nil && !run.Interrupted(ctx, err) {
		return nil, err
	}
	return r.Finish(ctx, wls, err)
}

// ShowOn returns an Env.OnSecond that shows each second's figures on the
// progress line p, or nil without a line.
func ShowOn(p *run.Progress) func(Progress) {
	if p == nil {
		return nil
	}
	return func(pr Progress) { p.Show(pr.String()) }
}

// String is the second's figures for a progress line: its samples, p99
// and, once the stop rule has enough, the bounds of the share above the
// threshold.
func (pr Progress) String() string {
	s := fmt.Sprintf("%4.0fs  %d samples  p99 %s  above threshold: %d",
		pr.Elapsed.Seconds(), pr.Ops, units.FormatDuration(pr.P99), pr.Exceed)
	if d := pr.Decision; d.NEff > 0 {
		s += fmt.Sprintf("  P(above) %.2f%%..%.2f%% (limit 1%%)", 100*d.Lower, 100*d.Upper)
	}
	if pr.Label != "" {
		s = pr.Label + " " + s
	}
	return s
}
