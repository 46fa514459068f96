package main

import (
	"io"

	"github.com/spf13/cobra"

	"etcdbench/internal/netcheck"
)

// newNetCmd is 'etcdbench net'.
func newNetCmd(stdout, stderr io.Writer) *cobra.Command {
	var c netcheck.Command
	var out outputFlags
	var prog progressFlags // accepted as everywhere; net draws no live line
	cmd := &cobra.Command{
		Use:   "net --listen HOST:PORT | --peers HOST:PORT,...",
		Short: "Check the network between nodes before etcd runs on them",
		Long:  netcheck.Help + exitCodesHelp + netcheck.ExitHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			c.Args = commandLine(cmd)
			res, err := c.Run(cmd.Context(), stderr)
			if res == nil && err == nil {
				return nil
			}
			return conclude(cmd.Context(), stdout, out.output, res, err)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&c.Listen, "listen", "", "run the listener on this node at HOST:PORT (this address only), for `net --peers` on another node")
	fs.StringSliceVar(&c.Peers, "peers", nil, "check the network to the listeners at HOST:PORT,... (each running `etcdbench net --listen`)")
	fs.StringVar(&c.Token, "token", "", "the shared secret, the same on both sides (or $"+netcheck.TokenEnv+", which other users cannot read in the process list)")
	fs.StringVar(&c.For, "for", "10m", "with --listen: stop listening after this long")
	fs.IntVar(&c.MaxConns, "max-conns", 8, "with --listen: the most connections served at once (a check opens three, one after another)")
	fs.StringVar(&c.Interval, "interval", "10ms", "with --peers: time between heartbeat-sized messages (etcd sends one every 100 ms; faster decides sooner)")
	fs.StringVar(&c.MaxDuration, "max-duration", "60s", "with --peers: the longest the round trips run when their p99 stays undecided")
	fs.StringVar(&c.StreamFor, "stream-for", "3s", "with --peers: how long the snapshot-sized stream runs (at most 256 MiB)")
	out.registerFormats(fs, []string{"text", "json", "html"}, "a network check's figures are not node metrics")
	prog.register(fs)
	return cmd
}
