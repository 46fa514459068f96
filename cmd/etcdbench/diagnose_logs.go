package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
)

// newDiagnoseLogsCmd is 'etcdbench diagnose logs' (being written; see issue 5).
func newDiagnoseLogsCmd(_, _ io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "logs",
		Short: "(not yet available)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("etcdbench diagnose logs is not available yet")
		},
	}
}
