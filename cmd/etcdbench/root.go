package main

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/disk"
	"etcdbench/internal/result"
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
	rf := &reportFiles{}
	root := &cobra.Command{
		Use:   "etcdbench",
		Short: "Is this storage, and this etcd, fast enough for etcd - and if not, why?",
		Long: `etcdbench measures a disk the way etcd uses it and judges the result against
etcd's thresholds, with confidence bounds.

With no command it runs 'etcdbench check' on the current directory (or --dir):
the WAL fdatasync check, the disk workloads of the budget, and an embedded etcd
on the same disk under load, in one verdict table.`,
		Version:       result.Version,
		Args:          noArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := rf.check(); err != nil {
				return err
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cf.register(root.Flags())
	rf.register(root.PersistentFlags())
	root.AddCommand(newDiskCmd(stdout, stderr), newCleanCmd(stdout, stderr))
	root.AddCommand(newEtcdCmd(stdout, stderr), newDiagnoseCmd(stdout, stderr))
	root.AddCommand(newTuneCmd(stdout, stderr))
	root.AddCommand(newReportCmd(stdout), newCompareCmd(stdout), newJudgeCmd(stdout, stderr))
	root.AddCommand(newTraceCmd(stdout, stderr), newWholeCheckCmd(stdout, stderr))
	return root
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}

// commandLine reconstructs the command line for the result record.
func commandLine(cmd *cobra.Command) []string {
	args := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		args = append(args, "--"+f.Name+"="+f.Value.String())
	})
	return args
}

func newDiskCmd(stdout, stderr io.Writer) *cobra.Command {
	names := []string{"all"}
	for _, s := range disk.Specs() {
		names = append(names, s.Name)
	}
	list := strings.Join(names, ", ")
	cmd := &cobra.Command{
		Use:   "disk",
		Short: "Storage workloads that reproduce etcd's I/O on a directory",
		// An unknown workload is reported as such, even when it is followed
		// by flags only the workloads know (disk nope --dir D).
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown workload %q: want one of %s", args[0], list)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("missing workload: etcdbench disk %s", strings.ReplaceAll(list, ", ", "|"))
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cmd.AddCommand(newWALCmd(stdout, stderr), newAllCmd(stdout, stderr))
	for _, spec := range disk.Specs() {
		if spec.Name != "wal" { // wal has its own, richer command
			cmd.AddCommand(newWorkloadCmd(spec, stdout, stderr))
		}
	}
	return cmd
}
