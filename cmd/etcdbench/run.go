package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"etcdbench/internal/disk"
	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/scratch"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// runSpec is one validated run of disk workloads.
type runSpec struct {
	dir        string
	workloads  []disk.Named
	thresholds verdict.Thresholds
	output     string
	progress   bool // a live line on stderr (a terminal)
	args       []string
	spaceHint  string // what to do when the free space is too small
}

// runDisk runs the workloads and prints the report. The report is written
// only after the scratch directory is gone, so nothing that happens while
// writing it (a closed pipe killing the process) can leave files behind.
func runDisk(ctx context.Context, rs runSpec, stdout, stderr io.Writer) error {
	res, err := measure(ctx, rs, stderr)
	if res != nil {
		if rerr := render(stdout, rs.output, res); rerr != nil {
			return rerr
		}
	}
	switch {
	case err != nil:
		return err
	case res.Failed():
		return errFailed
	}
	return nil
}

// measure checks the directory and free space, runs the workloads in a
// scratch directory and judges them. The scratch directory is removed
// before it returns, on every path. An interrupted run returns its partial
// result with the context's error.
func measure(ctx context.Context, rs runSpec, stderr io.Writer) (res *result.Result, err error) {
	dir, sd, stale, err := openScratch(rs.dir, disk.SpaceNeeded(rs.workloads), rs.spaceHint)
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := sd.Remove(); rerr != nil && err == nil {
			err = rerr
		}
	}()

	res = newResult(rs.args)
	res.Environment = sysinfo.Collect("/", dir)
	env := disk.Env{Dir: sd.Path, Root: "/", Facts: res.Environment, Thresholds: rs.thresholds}
	var prog *progressLine
	if rs.progress {
		prog = newProgressLine(stderr, len(rs.workloads))
		env.OnSecond = prog.update
	}
	wls, runErr := disk.RunSuite(ctx, env, rs.workloads, func(i int, name string) {
		if prog != nil {
			prog.start(i, name)
		}
	})
	if prog != nil {
		prog.clear()
	}
	interrupted := ctx.Err() != nil && runErr != nil
	if runErr != nil && !interrupted {
		return nil, runErr
	}
	if len(wls) > 0 {
		for _, p := range stale {
			wls[0].Notes = append(wls[0].Notes, "removed a scratch directory left by a killed run: "+p)
		}
	}
	if !interrupted && len(wls) == 0 {
		return nil, fmt.Errorf("no workload ran")
	}
	res.Workloads = wls
	res.Interrupted = interrupted
	res.Finish(time.Now().UTC())
	return res, runErr
}

// openScratch checks dir and its free space (need bytes; hint says what to
// do when it is short) and creates the scratch directory in it. It returns
// dir's absolute path and the stale scratch directories it removed.
func openScratch(dir string, need int64, hint string) (string, *scratch.Dir, []string, error) {
	abs, err := scratch.Check(dir)
	if err != nil {
		return "", nil, nil, err
	}
	if err := scratch.CheckFree(abs, need); err != nil {
		return "", nil, nil, fmt.Errorf("%w; %s", err, hint)
	}
	sd, stale, err := scratch.Create(abs)
	if err != nil {
		return "", nil, nil, err
	}
	return abs, sd, stale, nil
}

// newResult starts a result record for the command line args.
func newResult(args []string) *result.Result {
	return &result.Result{
		Schema:    result.SchemaID,
		Tool:      result.Tool{Name: "etcdbench", Version: result.Version, GoVersion: runtime.Version(), Args: args},
		StartedAt: time.Now().UTC(),
	}
}

func render(w io.Writer, format string, r *result.Result) error {
	if format == "json" {
		return report.JSON(w, r)
	}
	return report.Text(w, r)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return termios(int(f.Fd()))
}
