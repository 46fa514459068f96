package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/result"
)

// packageCommand is a command whose flags and run live in its package
// (net, drill; see root.go): cmd adds the report's flags and reports.
type packageCommand interface {
	Register(fs *pflag.FlagSet)
	Run(ctx context.Context, args []string, progress, stderr io.Writer) (*result.Result, error)
}

// packageCmd wires c as a command offering formats (noProm says why not
// prom when it is not among them); a nil result with no error reports
// nothing (net's listener).
func packageCmd(c packageCommand, use, short, long string, formats []string, noProm string, stdout, stderr io.Writer) *cobra.Command {
	var out outputFlags
	var prog progressFlags
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			res, err := c.Run(cmd.Context(), commandLine(cmd), prog.terminal(stderr, out.output), stderr)
			if res == nil && err == nil {
				return nil
			}
			return conclude(cmd.Context(), stdout, out.output, res, err)
		}}
	c.Register(cmd.Flags())
	out.registerFormats(cmd.Flags(), formats, noProm)
	prog.register(cmd.Flags())
	return cmd
}
