package main

import (
	"etcdbench/internal/run"
	"io"

	"github.com/spf13/cobra"
)

// newDiagnoseCmd is the parent of the commands that explain a live or
// saved etcd's slowness without writing to it.
func newDiagnoseCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diagnose",
		Short: "Explain a slow etcd from its metrics, its logs and its real WAL writes",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run.Usagef("missing what to diagnose: etcdbench diagnose metrics|logs|wal")
		},
	}
	cmd.AddCommand(
		newDiagnoseMetricsCmd(stdout, stderr),
		newDiagnoseLogsCmd(stdout, stderr),
		newDiagnoseWALCmd(stdout, stderr),
	)
	return cmd
}
