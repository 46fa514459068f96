package main

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/disk"
	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
)

// runDisk runs the disk workloads and prints the report. The report is
// written only after the scratch directory is gone, so nothing that
// happens while writing it (a closed pipe killing the process) can leave
// files behind.
func runDisk(ctx context.Context, s disk.Suite, output string, stdout io.Writer) error {
	res, err := disk.Measure(ctx, s)
	return conclude(ctx, stdout, output, res, err)
}

// conclude reports res (when there is one, also a partial one) through
// emit and returns the command's error: err if the run ended in one, else
// run.ErrFailed when a verdict failed, else nil.
func conclude(ctx context.Context, stdout io.Writer, output string, res *result.Result, err error) error {
	return concludeWith(res, err, func() error {
		return emit(ctx, stdout, output, []*result.Result{res}, nil)
	})
}

// concludeWith is conclude for a command whose report is its own: report
// writes it (and the root's report files) when there is a result.
func concludeWith(res *result.Result, err error, report func() error) error {
	if res != nil {
		if rerr := report(); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	switch {
	case err != nil:
		return err
	case res != nil && res.Failed():
		return run.ErrFailed
	}
	return nil
}

// checkFormat rejects a report format that is not among formats (none:
// every format the reporters know).
func checkFormat(flag, format string, formats []string) error {
	if formats == nil {
		formats = report.Formats
	}
	if slices.Contains(formats, format) {
		return nil
	}
	return run.Usagef("%s %q: want %s", flag, format, strings.Join(formats, ", "))
}

// emit renders rs (named by sources when there are several) to w in
// format and writes the report files asked for with the root's --html and
// --textfile flags (carried in ctx by the root's PersistentPreRunE).
// Every command that produces a result reports through it.
func emit(ctx context.Context, w io.Writer, format string, rs []*result.Result, sources []string) error {
	if err := report.Render(w, format, rs, sources); err != nil {
		return err
	}
	return reportFilesFrom(ctx).Write(rs, sources)
}

// registerReportFiles registers the root's --html, --json and --textfile flags.
func registerReportFiles(fs *pflag.FlagSet, f *report.Files) {
	fs.StringVar(&f.HTML, "html", "", "also write the report as a self-contained HTML `FILE` (charts, verdicts, environment)")
	fs.StringVar(&f.JSON, "json", "", "also write the report as JSON into `FILE`, replaced atomically (what -o json prints; e.g. the exporter's --capacity file)")
	fs.StringVar(&f.Textfile, "textfile", "", "also write the results as Prometheus metrics into `DIR` (node_exporter textfile collector; file "+textfileName+", replaced atomically)")
}

// textfileName is the name of the file --textfile writes, as
// report.PromFileName makes it.
const textfileName = "etcdbench_<command>_<dir>.prom, e.g. etcdbench_disk_wal_var_lib_etcd.prom"

// reportFileFlags are the root's report file flags, the -o format each
// writes and its value.
var reportFileFlags = []struct {
	name, format string
	given        func(report.Files) string
}{
	{"html", "html", func(f report.Files) string { return f.HTML }},
	{"json", "json", func(f report.Files) string { return f.JSON }},
	{"textfile", "prom", func(f report.Files) string { return f.Textfile }},
}

// reportFilesAccepted refuses the root's report files a command does not
// write: --html unless its -o offers html, --textfile unless it offers
// prom (formatsAnnotation).
func reportFilesAccepted(cmd *cobra.Command, f report.Files) error {
	for _, rf := range reportFileFlags {
		if rf.given(f) == "" {
			continue
		}
		if err := reportFileRefused(cmd, rf.name, rf.format); err != nil {
			return err
		}
	}
	return nil
}

// reportFileRefused says why the root's report file flag name, which
// writes format, does not apply to cmd; nil when it does.
func reportFileRefused(cmd *cobra.Command, name, format string) error {
	var formats, noProm []string
	if o := cmd.Flags().Lookup("output"); o != nil {
		formats, noProm = o.Annotations[formatsAnnotation], o.Annotations[noPromAnnotation]
	}
	switch {
	case slices.Contains(formats, format):
		return nil
	case formats == nil:
		return run.Usagef("--%s does not apply to '%s': it writes no report", name, cmd.CommandPath())
	case len(noProm) > 0 && format == "prom":
		return run.Usagef("--%s does not apply to '%s': %s", name, cmd.CommandPath(), noProm[0])
	}
	return run.Usagef("--%s does not apply to '%s': its report is %s, not %s", name, cmd.CommandPath(), strings.Join(formats, ", "), format)
}

// helpWithoutRefusedFiles wraps help so that a command's help does not
// list the root's report file flags it refuses (clean, exporter: they
// write no report; tune: no prom). A group (etcd, disk) keeps them: they
// may be given before its subcommand.
func helpWithoutRefusedFiles(root *cobra.Command, help func(*cobra.Command, []string)) func(*cobra.Command, []string) {
	return func(cmd *cobra.Command, args []string) {
		if cmd.HasAvailableSubCommands() {
			help(cmd, args)
			return
		}
		var hidden []*pflag.Flag
		for _, rf := range reportFileFlags {
			f := root.PersistentFlags().Lookup(rf.name)
			if f != nil && !f.Hidden && reportFileRefused(cmd, rf.name, rf.format) != nil {
				f.Hidden = true
				hidden = append(hidden, f)
			}
		}
		defer func() {
			for _, f := range hidden {
				f.Hidden = false
			}
		}()
		help(cmd, args)
	}
}

type reportFilesKey struct{}

// withReportFiles returns ctx carrying the report files of the command line.
func withReportFiles(ctx context.Context, f *report.Files) context.Context {
	return context.WithValue(ctx, reportFilesKey{}, f)
}

// reportFilesFrom are the report files ctx carries (none: no files).
func reportFilesFrom(ctx context.Context) report.Files {
	if f, _ := ctx.Value(reportFilesKey{}).(*report.Files); f != nil {
		return *f
	}
	return report.Files{}
}
