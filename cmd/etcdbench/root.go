package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/capacity/diskmodel"
	"etcdbench/internal/drill"
	"etcdbench/internal/netcheck"
	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
)

// execute runs the command line args and returns the exit code.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	path := root.Name()
	if cmd != nil {
		path = cmd.CommandPath()
	}
	return exitCode(err, path, stderr)
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	cf := &wholeCheckFlags{}
	rf := &report.Files{}
	root := &cobra.Command{
		Use:   "etcdbench",
		Short: "Is this storage, and this etcd, fast enough for etcd - and if not, why?",
		Long: `etcdbench measures a disk the way etcd uses it and judges the result against
etcd's thresholds, with confidence bounds.

With no command it runs 'etcdbench check' on the current directory (or --dir):
the WAL fdatasync check, the disk workloads of the budget, and an embedded etcd
on the same disk under load, in one verdict table.` + exitCodesHelp,
		Version:       result.Version,
		Args:          noArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := reportFilesAccepted(cmd, *rf); err != nil {
				return err
			}
			if err := rf.Check(); err != nil {
				return run.Usage(err)
			}
			cmd.SetContext(withReportFiles(cmd.Context(), rf))
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCheckCommand(cmd, cf, stdout, stderr)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return run.Usage(flagError(err)) })
	cf.register(root.Flags())
	registerReportFiles(root.PersistentFlags(), rf)
	root.SetHelpFunc(helpWithoutRefusedFiles(root, root.HelpFunc()))
	root.AddCommand(newDiskCmd(stdout, stderr), newCleanCmd(stdout, stderr), newCapacityCmd(stdout, stderr))
	root.AddCommand(newEtcdCmd(stdout, stderr), newDiagnoseCmd(stdout, stderr))
	root.AddCommand(newTuneCmd(stdout, stderr), packageCmd(&netcheck.Command{}, "net --listen HOST:PORT | --peers HOST:PORT,...", "Check the network between nodes before etcd runs on them",
		netcheck.Help+exitCodesHelp+netcheck.ExitHelp, []string{"text", "json", "html"}, "a network check's figures are not node metrics", stdout, stderr),
		packageCmd(&drill.Command{}, "drill --dir DIR", drill.Short, drill.Help+exitCodesHelp, report.Formats, "", stdout, stderr))
	root.AddCommand(newReportCmd(stdout), newCompareCmd(stdout), newJudgeCmd(stdout, stderr))
	root.AddCommand(newTraceCmd(stdout, stderr), newExporterCmd(stdout, stderr), newWholeCheckCmd(stdout, stderr))
	return root
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return nil
	case !cmd.HasAvailableSubCommands():
		return run.Usagef("unexpected argument %q", args[0])
	}
	// A command with subcommands that runs on its own too (etcdbench
	// runs check): an argument is most likely a mistyped subcommand.
	return run.Usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), suggest(cmd, args[0]))
}

// suggest is cobra's suggestion of cmd's subcommands for a mistyped
// name, as "; did you mean "x"?" (or "x" or "y"), "" when none is near.
func suggest(cmd *cobra.Command, typed string) string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, which SuggestionsFor does not apply
	}
	s := cmd.SuggestionsFor(typed)
	if len(s) == 0 {
		return ""
	}
	return `; did you mean "` + strings.Join(s, `" or "`) + `"?`
}

// commandLine reconstructs the command line for the result record: the
// command path, then every flag given as --name=value, in a form that
// parses back to the same value (report.CommandLine quotes it for a shell).
func commandLine(cmd *cobra.Command) []string {
	args := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		args = append(args, flagArgs(f)...)
	})
	return args
}

// flagArgs are the arguments that give f its value. A slice flag's
// String() is pflag's display form ([a,b]), which does not parse back:
// a stringArray is one --name=v per element (each taken whole), a
// stringSlice one --name= with the elements as the CSV line pflag reads
// (quoted where one holds a comma or a quote), other slices their
// elements joined by commas.
func flagArgs(f *pflag.Flag) []string {
	sv, ok := f.Value.(pflag.SliceValue)
	if !ok {
		return []string{"--" + f.Name + "=" + f.Value.String()}
	}
	elems := sv.GetSlice()
	switch f.Value.Type() {
	case "stringArray":
		out := make([]string, 0, len(elems))
		for _, e := range elems {
			out = append(out, "--"+f.Name+"="+e)
		}
		return out
	case "stringSlice":
		return []string{"--" + f.Name + "=" + csvLine(elems)}
	}
	return []string{"--" + f.Name + "=" + strings.Join(elems, ",")}
}

// csvLine writes elems as one CSV record, as pflag's stringSlice reads it.
func csvLine(elems []string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(elems) // a strings.Builder does not fail
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

func newDiskCmd(stdout, stderr io.Writer) *cobra.Command {
	names := []string{"all"}
	for _, s := range diskmodel.Specs() {
		names = append(names, s.Name)
	}
	list := strings.Join(names, ", ")
	cmd := &cobra.Command{
		Use:   "disk",
		Short: "Run storage workloads that reproduce etcd's I/O on a directory",
		// An unknown workload is reported as such, even when it is followed
		// by flags only the workloads know (disk nope --dir D).
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return run.Usagef("unknown workload %q: want one of %s%s", args[0], list, suggest(c, args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run.Usagef("missing workload: etcdbench disk %s", strings.ReplaceAll(list, ", ", "|"))
		},
	}
	cmd.AddCommand(newWALCmd(stdout, stderr), newAllCmd(stdout, stderr))
	for _, spec := range diskmodel.Specs() {
		if spec.Name != "wal" { // wal has its own, richer command
			cmd.AddCommand(newWorkloadCmd(spec, stdout, stderr))
		}
	}
	return cmd
}

// flagWants is what a flag of each of pflag's own types takes, in words.
var flagWants = map[string]string{
	"int": "a whole number", "int32": "a whole number", "int64": "a whole number",
	"uint": "a whole number of 0 or more", "uint32": "a whole number of 0 or more", "uint64": "a whole number of 0 or more",
	"float32": "a number", "float64": "a number",
	"duration": "a duration (e.g. 10s, 1m30s, 500ms)", "bool": "true or false",
}

// flagError says a bad value of a flag of pflag's own types in the
// user's terms (--count: "x" is not a whole number) instead of Go's
// parser's (invalid argument "x" for "--count" flag: strconv.ParseInt:
// parsing "x": invalid syntax). Other errors are left as they are.
func flagError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err
	}
	want, ok := flagWants[iv.GetFlag().Value.Type()]
	if !ok {
		return err
	}
	return fmt.Errorf("--%s: %q is not %s", iv.GetFlag().Name, iv.GetValue(), want)
}
