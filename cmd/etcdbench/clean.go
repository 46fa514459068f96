package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"etcdbench/internal/scratch"
)

func newCleanCmd(stdout, _ io.Writer) *cobra.Command {
	var dir dirFlag
	cmd := &cobra.Command{
		Use:   "clean --dir DIR",
		Short: "Remove scratch directories that killed etcdbench runs left in DIR",
		Long: `Removes the .etcdbench-scratch-* directories in DIR whose owner process is
gone (killed with SIGKILL, or the machine rebooted). Directories of a run that
is still going, and anything without etcdbench's marker file, are left alone.` + exitCodesHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dir.require("the directory a killed run was testing", ""); err != nil {
				return err
			}
			abs, err := scratch.Check(dir.path)
			if err != nil {
				return err
			}
			rep, err := scratch.Clean(abs)
			for _, p := range rep.Removed {
				fmt.Fprintf(stdout, "removed %s\n", p)
			}
			for _, p := range rep.InUse {
				fmt.Fprintf(stdout, "kept %s (a running etcdbench owns it)\n", p)
			}
			for _, p := range rep.Unreadable {
				fmt.Fprintf(stdout, "kept %s (cannot read its marker: run clean as the user that created it, or as root)\n", p)
			}
			if err != nil {
				return err
			}
			if len(rep.Removed)+len(rep.InUse)+len(rep.Unreadable) == 0 {
				fmt.Fprintf(stdout, "no etcdbench scratch directories in %s\n", abs)
			}
			return nil
		},
	}
	dir.register(cmd.Flags(), "", "directory to clean")
	return cmd
}
