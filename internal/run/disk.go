package run

import (
	"context"
	"io"

	"etcdbench/internal/disk"
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// DiskSpec is one validated run of disk workloads.
type DiskSpec struct {
	// Dir is the directory under test; the workloads run in a scratch
	// directory inside it.
	Dir        string
	Workloads  []disk.Named
	Thresholds verdict.Thresholds
	// Progress is the terminal for the live line, or nil.
	Progress io.Writer
	Args     []string
	// SpaceHint says what to do when the free space is too small.
	SpaceHint string
}

// Disk checks the directory and free space, runs the workloads in a
// scratch directory and judges them. The scratch directory is removed
// before it returns, on every path. An interrupted run returns its partial
// result with the context's error; a run that failed otherwise returns
// only its error.
func Disk(ctx context.Context, s DiskSpec) (res *result.Result, err error) {
	r, err := Open(s.Dir, disk.SpaceNeeded(s.Workloads), s.SpaceHint, s.Args)
	if err != nil {
		return nil, err
	}
	defer r.Close(&err)
	env := disk.Env{Dir: r.Scratch.Path, Root: "/", Facts: r.Result.Environment, Thresholds: s.Thresholds}
	prog := NewProgress(s.Progress, len(s.Workloads))
	env.OnSecond = prog.OnDisk()
	wls, err := disk.RunSuite(ctx, env, s.Workloads, prog.Start)
	prog.Clear()
	if err != nil && !Interrupted(ctx, err) {
		return nil, err
	}
	return r.Finish(ctx, wls, err)
}
