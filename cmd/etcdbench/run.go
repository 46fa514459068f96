package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
)

// runDisk runs the disk workloads and prints the report. The report is
// written only after the scratch directory is gone, so nothing that
// happens while writing it (a closed pipe killing the process) can leave
// files behind.
func runDisk(ctx context.Context, s run.DiskSpec, output string, stdout io.Writer) error {
	res, err := run.Disk(ctx, s)
	return conclude(ctx, stdout, output, res, err)
}

// conclude reports res (when there is one, also a partial one) through
// emit and returns the command's error: err if the run ended in one, else
// run.ErrFailed when a verdict failed, else nil.
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
		return run.ErrFailed
	}
	return nil
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
	return run.Usagef("%s %q: want %s", flag, format, strings.Join(formats, ", "))
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
			return run.Usagef("--html %s: directory %s does not exist", f.html, dir)
		}
		if st, err := os.Stat(f.html); err == nil && st.IsDir() {
			return run.Usagef("--html %s is a directory: give a file name such as report.html", f.html)
		}
	}
	if f.textfile != "" {
		if st, err := os.Stat(f.textfile); err != nil || !st.IsDir() {
			return run.Usagef("--textfile %s: not a directory (give node_exporter's --collector.textfile.directory)", f.textfile)
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
