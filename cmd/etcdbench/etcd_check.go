package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
)

// newEtcdCheckCmd is 'etcdbench etcd check' (being written; see issue 4).
func newEtcdCheckCmd(_, _ io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "(not yet available)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("etcdbench etcd check is not available yet")
		},
	}
}
