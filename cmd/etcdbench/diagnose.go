package main

import (
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
			return usagef("missing what to diagnose: etcdbench diagnose metrics|logs|wal")
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cmd.AddCommand(
		newDiagnoseMetricsCmd(stdout, stderr),
		newDiagnoseLogsCmd(stdout, stderr),
		newDiagnoseWALCmd(stdout, stderr),
	)
	return cmd
}
