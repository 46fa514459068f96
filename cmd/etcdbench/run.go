package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

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
	return conclude(ctx, stdout, rs.output, res, err)
}

// conclude reports res (when there is one, also a partial one) through
// emit and returns the command's error: err if the run ended in one, else
// errFailed when a verdict failed, else nil.
func conclude(ctx context.Context, stdout io.Writer, output string, res *result.Result, err error) error {
	if res != nil {
		if rerr := emit(ctx, stdout, output, res); rerr != nil {
			return errors.Join(err, rerr)
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

// formats are the report formats of -o/--output and report --format.
var formats = []string{"text", "json", "html", "prom"}

// checkFormat rejects a report format render does not know.
func checkFormat(flag, format string) error {
	for _, f := range formats {
		if f == format {
			return nil
		}
	}
	return usagef("%s %q: want %s", flag, format, strings.Join(formats, ", "))
}

// render writes r to w in format (text, json, html or prom).
func render(w io.Writer, format string, r *result.Result) error {
	switch format {
	case "json":
		return report.JSON(w, r)
	case "html":
		return report.HTML(w, r)
	case "prom":
		return report.Prom(w, r)
	}
	return report.Text(w, r)
}

// emit renders r to w in format and writes the report files asked for with
// the root's --html and --textfile flags (carried in ctx by the root's
// PersistentPreRunE). Every command that produces a result reports through
// it.
func emit(ctx context.Context, w io.Writer, format string, r *result.Result) error {
	if err := render(w, format, r); err != nil {
		return err
	}
	return reportFilesFrom(ctx).write(r)
}

// reportFiles are the root's --html and --textfile flags.
type reportFiles struct {
	html, textfile string
}

func (f *reportFiles) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.html, "html", "", "also write the report as a self-contained HTML `FILE` (charts, verdicts, environment)")
	fs.StringVar(&f.textfile, "textfile", "", "also write the results as Prometheus metrics into `DIR` (node_exporter textfile collector; file etcdbench_<command>.prom, replaced atomically)")
}

// check catches a bad --html or --textfile before a run that may be long.
func (f *reportFiles) check() error {
	if f.html != "" {
		dir := filepath.Dir(f.html)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("--html %s: directory %s does not exist", f.html, dir)
		}
		if st, err := os.Stat(f.html); err == nil && st.IsDir() {
			return usagef("--html %s is a directory: give a file name such as report.html", f.html)
		}
	}
	if f.textfile != "" {
		if st, err := os.Stat(f.textfile); err != nil || !st.IsDir() {
			return usagef("--textfile %s: not a directory (give node_exporter's --collector.textfile.directory)", f.textfile)
		}
	}
	return nil
}

// write writes the report files asked for.
func (f *reportFiles) write(r *result.Result) error {
	if f == nil {
		return nil
	}
	if f.html != "" {
		if err := report.WriteFileAtomic(f.html, func(w io.Writer) error { return report.HTML(w, r) }); err != nil {
			return err
		}
	}
	if f.textfile != "" {
		if _, err := report.WriteTextfile(f.textfile, r); err != nil {
			return err
		}
	}
	return nil
}

type reportFilesKey struct{}

// withReportFiles returns ctx carrying the report files of the command line.
func withReportFiles(ctx context.Context, f *reportFiles) context.Context {
	return context.WithValue(ctx, reportFilesKey{}, f)
}

func reportFilesFrom(ctx context.Context) *reportFiles {
	f, _ := ctx.Value(reportFilesKey{}).(*reportFiles)
	return f
}

// showProgress says whether a live progress line goes to stderr: a
// terminal, not turned off with --no-progress, and a text report (JSON
// and Prometheus output stay clean for the programs that read them).
func showProgress(stderr io.Writer, noProgress bool, output string) bool {
	return isTerminal(stderr) && !noProgress && output == "text"
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return termios(int(f.Fd()))
}
