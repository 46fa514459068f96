package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
)

// newDiagnoseMetricsCmd is 'etcdbench diagnose metrics' (being written; see issue 5).
func newDiagnoseMetricsCmd(_, _ io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "metrics",
		Short: "(not yet available)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("etcdbench diagnose metrics is not available yet")
		},
	}
}
