package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/netcheck"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
)

// tokenEnv is the environment variable a token may come from instead of
// --token (which other users of the node can read in its process list).
const tokenEnv = "ETCDBENCH_NET_TOKEN"

// netFlags are the flags of `etcdbench net`.
type netFlags struct {
	listen      string
	peers       []string
	token       string
	lifetime    string
	maxConns    int
	interval    string
	maxDuration string
	streamFor   string
	out         outputFlags
	prog        progressFlags // accepted as everywhere; net draws no live line
}

func (f *netFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.listen, "listen", "", "run the listener on this node at HOST:PORT (this address only), for `net --peers` on another node")
	fs.StringSliceVar(&f.peers, "peers", nil, "check the network to the listeners at HOST:PORT,... (each running `etcdbench net --listen`)")
	fs.StringVar(&f.token, "token", "", "the shared secret, the same on both sides (or $"+tokenEnv+", which other users cannot read in the process list)")
	fs.StringVar(&f.lifetime, "for", "10m", "with --listen: stop listening after this long")
	fs.IntVar(&f.maxConns, "max-conns", 8, "with --listen: the most connections served at once (a check opens three, one after another)")
	fs.StringVar(&f.interval, "interval", "10ms", "with --peers: time between heartbeat-sized messages (etcd sends one every 100 ms; faster decides sooner)")
	fs.StringVar(&f.maxDuration, "max-duration", "60s", "with --peers: the longest the round trips run when their p99 stays undecided")
	fs.StringVar(&f.streamFor, "stream-for", "3s", "with --peers: how long the snapshot-sized stream runs (at most 256 MiB)")
	f.out.registerFormats(fs, []string{"text", "json", "html"}, "a network check's figures are not node metrics")
	f.prog.register(fs)
}

func newNetCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &netFlags{}
	cmd := &cobra.Command{
		Use:   "net --listen HOST:PORT | --peers HOST:PORT,...",
		Short: "Check the network between nodes before etcd runs on them",
		Long: `Checks the network between this node and others as etcd's members would
use it, before etcd exists, as 'disk wal' checks a disk. On one node run
the listener:

  etcdbench net --listen 10.0.0.5:2390 --token SECRET

and on another:

  etcdbench net --peers 10.0.0.5:2390 --token SECRET

It sends heartbeat-sized messages (every --interval) and 16 KiB append
batches at 100/s beside them, both echoed, until the round trip p99 is
decided against the limit (OpenShift's 50 ms; etcd alerts at 150 ms) at
95 % confidence or --max-duration ends, then a snapshot-sized stream
(--stream-for, at most 256 MiB): its MB/s and the time a 1 GiB snapshot
takes. The report gives the round trip p50/p99/max with its confidence
interval, messages lost, and the --heartbeat-interval and
--election-timeout to run etcd with (docs/net.md).

The listener binds only the address given, answers only its own protocol
to a peer that proves the token (an HMAC of nonces: the token is not sent),
serves --max-conns connections at once and 1 GiB each, closes a
connection idle for 30 s, stops after --for, and never sends more bytes on
a connection than it read on it.` + exitCodesHelp + `
A peer that is not a listener, a wrong token, or a listen address in use:
exit 2; a peer that does not answer (a closed port): exit 3.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, stdout, stderr)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func (f *netFlags) run(cmd *cobra.Command, stdout, stderr io.Writer) error {
	if err := f.out.check(); err != nil {
		return err
	}
	token := f.token
	if token == "" {
		token = os.Getenv(tokenEnv)
	}
	switch {
	case (f.listen == "") == (len(f.peers) == 0):
		return run.Usagef("give --listen HOST:PORT (this node listens) or --peers HOST:PORT,... (this node checks them): one of the two")
	case token == "":
		return run.Usagef("no token: give --token SECRET (or $%s), the same on both sides", tokenEnv)
	}
	if f.listen != "" {
		return f.serve(cmd, token, stderr)
	}
	s := netcheck.DefaultSpec()
	s.Peers, s.Token, s.Args = f.peers, token, commandLine(cmd)
	for _, d := range []struct {
		flag string
		val  string
		to   *int64
	}{{"--interval", f.interval, (*int64)(&s.Interval)}, {"--max-duration", f.maxDuration, (*int64)(&s.MaxDuration)}, {"--stream-for", f.streamFor, (*int64)(&s.StreamFor)}} {
		v, err := units.ParseDuration(d.val)
		if err != nil || v <= 0 {
			return run.Usagef("%s %q: want a positive duration", d.flag, d.val)
		}
		*d.to = int64(v)
	}
	s.MinDuration = min(s.MinDuration, s.MaxDuration)
	res, err := netcheck.Check(cmd.Context(), s)
	return conclude(cmd.Context(), stdout, f.out.output, res, err)
}

func (f *netFlags) serve(cmd *cobra.Command, token string, stderr io.Writer) error {
	life, err := units.ParseDuration(f.lifetime)
	if err != nil || life <= 0 {
		return run.Usagef("--for %q: want a positive duration such as 10m", f.lifetime)
	}
	if f.maxConns < 1 {
		return run.Usagef("--max-conns %d: want at least 1", f.maxConns)
	}
	ln, err := netcheck.Listen(f.listen)
	if err != nil {
		return run.Usagef("%s", strings.TrimPrefix(err.Error(), "listen tcp "))
	}
	lim := netcheck.DefaultLimits()
	lim.For, lim.MaxConns = life, f.maxConns
	fmt.Fprintf(stderr, "etcdbench net: listening on %s for %v; on another node: etcdbench net --peers %s --token ...\n", ln.Addr(), life, ln.Addr())
	s, err := netcheck.Serve(cmd.Context(), ln, token, lim)
	fmt.Fprintf(stderr, "etcdbench net: served %d connections (%d refused over --max-conns, %d not this protocol, %d with a wrong token), %d bytes in, %d out\n",
		s.Conns, s.Refused, s.BadHellos, s.BadTokens, s.BytesIn, s.BytesOut)
	if err == nil && cmd.Context().Err() != nil {
		return cmd.Context().Err()
	}
	return err
}
