package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
)

// newDiagnoseWALCmd is 'etcdbench diagnose wal' (being written; see issue 5).
func newDiagnoseWALCmd(_, _ io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "wal",
		Short: "(not yet available)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("etcdbench diagnose wal is not available yet")
		},
	}
}
