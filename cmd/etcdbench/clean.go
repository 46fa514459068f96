package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"etcdbench/internal/scratch"
)

func newCleanCmd(stdout, _ io.Writer) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "clean --dir DIR",
		Short: "Remove scratch directories that killed etcdbench runs left in DIR",
		Long: `Removes the .etcdbench-scratch-* directories in DIR whose owner process is
gone (killed with SIGKILL, or the machine rebooted). Directories of a run that
is still going, and anything without etcdbench's marker file, are left alone.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("dir") || dir == "" {
				return usagef("--dir is required: the directory a killed run was testing")
			}
			abs, err := scratch.Check(dir)
			if err != nil {
				return err
			}
			removed, inUse, err := scratch.Clean(abs)
			for _, p := range removed {
				fmt.Fprintf(stdout, "removed %s\n", p)
			}
			for _, p := range inUse {
				fmt.Fprintf(stdout, "kept %s (a running etcdbench owns it)\n", p)
			}
			if err != nil {
				return err
			}
			if len(removed)+len(inUse) == 0 {
				fmt.Fprintf(stdout, "no etcdbench scratch directories in %s\n", abs)
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cmd.Flags().StringVar(&dir, "dir", "", "directory to clean")
	return cmd
}
