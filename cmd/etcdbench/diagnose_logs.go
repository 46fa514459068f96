package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/run"
)

// runDiagnoseLogs diagnoses the log (a file, or stdin for "-") and
// prints the report: exit 1 (run.ErrFailed) when a cause is found.
func runDiagnoseLogs(ctx context.Context, name, output string, args []string, stdin io.Reader, stdout io.Writer) error {
	res, err := diagnose.Logs(ctx, diagnose.LogsSpec{Path: name, Stdin: stdin, Args: args})
	if err != nil {
		return err
	}
	return finishDiagnosis(ctx, stdout, output, res)
}

// newDiagnoseLogsCmd is 'etcdbench diagnose logs'.
func newDiagnoseLogsCmd(stdout, _ io.Writer) *cobra.Command {
	var out outputFlags
	cmd := &cobra.Command{
		Use:   "logs FILE|-",
		Short: "Name the cause of a slow etcd from its logs (zap JSON, capnslog text, journalctl)",
		Long: `Reads an etcd log - zap JSON of etcd 3.4-3.7, the older capnslog text, or
journalctl output of either (journalctl -u etcd | etcdbench diagnose logs -;
the short, short-precise, short-iso, short-iso-precise and short-full modes) -
and counts "slow fdatasync", "apply request took too long", "leader failed to
send out heartbeat on time", other "took too long"/"request stats" lines,
elections and "database space exceeded" (or the NOSPACE alarm), per minute,
with the worst of each. The same rules as 'diagnose metrics' turn them into
ranked findings.

journalctl's default time has no year: an event with only that time takes the
year of the log's dated lines (etcd's own timestamps), or is counted without a
minute when there are none (-o short-iso prints full times).

Exit codes: 0 healthy (or only warnings), 1 a cause was found, 2 bad input.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return run.Usagef("want one log file, or - for standard input")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			return runDiagnoseLogs(cmd.Context(), args[0], out.output, commandLine(cmd), cmd.InOrStdin(), stdout)
		},
	}
	out.register(cmd.Flags())
	return cmd
}
