package netcheck

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
)

// TokenEnv is the environment variable a token may come from instead of
// --token (which other users of the node can read in its process list).
const TokenEnv = "ETCDBENCH_NET_TOKEN"

// Help is `etcdbench net`'s long help, before the exit codes.
const Help = `Checks the network between this node and others as etcd's members would
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
--election-timeout to run etcd with (docs/network.md).

The listener binds only the address given, answers only its own protocol
to a peer that proves the token (an HMAC of nonces: the token is not sent),
serves --max-conns connections at once and 1 GiB each, closes a
connection idle for 30 s, stops after --for, and never sends more bytes on
a connection than it read on it.`

// ExitHelp ends Help after the common exit codes.
const ExitHelp = `
A peer that is not a listener, a wrong token, or a listen address in use:
exit 2; a peer that does not answer (a closed port): exit 3.`

// Command is `etcdbench net`'s flags, as given.
type Command struct {
	Listen                                string
	Peers                                 []string
	Token                                 string
	For, Interval, MaxDuration, StreamFor string
	MaxConns                              int
	Args                                  []string
}

// Register adds net's flags (but the report's) to fs.
func (c *Command) Register(fs *pflag.FlagSet) {
	fs.StringVar(&c.Listen, "listen", "", "run the listener on this node at HOST:PORT (this address only), for `net --peers` on another node")
	fs.StringSliceVar(&c.Peers, "peers", nil, "check the network to the listeners at HOST:PORT,... (each running `etcdbench net --listen`)")
	fs.StringVar(&c.Token, "token", "", "the shared secret, the same on both sides (or $"+TokenEnv+", which other users cannot read in the process list)")
	fs.StringVar(&c.For, "for", "10m", "with --listen: stop listening after this long")
	fs.IntVar(&c.MaxConns, "max-conns", 8, "with --listen: the most connections served at once (a check opens three, one after another)")
	fs.StringVar(&c.Interval, "interval", "10ms", "with --peers: time between heartbeat-sized messages (etcd sends one every 100 ms; faster decides sooner)")
	fs.StringVar(&c.MaxDuration, "max-duration", "60s", "with --peers: the longest the round trips run when their p99 stays undecided")
	fs.StringVar(&c.StreamFor, "stream-for", "3s", "with --peers: how long the snapshot-sized stream runs (at most 256 MiB)")
}

// Run runs the listener (Listen) or the check (Peers) for the command
// line args: the check's result, or nil after the listener ends. net
// draws no live line (progress).
func (c *Command) Run(ctx context.Context, args []string, _, stderr io.Writer) (*result.Result, error) {
	c.Args = args
	if c.Token == "" {
		c.Token = os.Getenv(TokenEnv)
	}
	switch {
	case (c.Listen == "") == (len(c.Peers) == 0):
		return nil, run.Usagef("give --listen HOST:PORT (this node listens) or --peers HOST:PORT,... (this node checks them): one of the two")
	case c.Token == "":
		return nil, run.Usagef("no token: give --token SECRET (or $%s), the same on both sides", TokenEnv)
	}
	if c.Listen != "" {
		return nil, c.serve(ctx, stderr)
	}
	s := DefaultSpec()
	s.Peers, s.Token, s.Args = c.Peers, c.Token, c.Args
	for _, d := range []struct {
		flag, val string
		to        *time.Duration
	}{{"--interval", c.Interval, &s.Interval}, {"--max-duration", c.MaxDuration, &s.MaxDuration}, {"--stream-for", c.StreamFor, &s.StreamFor}} {
		v, err := units.ParseDuration(d.val)
		if err != nil || v <= 0 {
			return nil, run.Usagef("%s %q: want a positive duration", d.flag, d.val)
		}
		*d.to = v
	}
	s.MinDuration = min(s.MinDuration, s.MaxDuration)
	return Check(ctx, s)
}

func (c *Command) serve(ctx context.Context, stderr io.Writer) error {
	life, err := units.ParseDuration(c.For)
	if err != nil || life <= 0 {
		return run.Usagef("--for %q: want a positive duration such as 10m", c.For)
	}
	if c.MaxConns < 1 {
		return run.Usagef("--max-conns %d: want at least 1", c.MaxConns)
	}
	ln, err := Listen(c.Listen)
	if err != nil {
		return run.Usagef("%s", strings.TrimPrefix(err.Error(), "listen tcp "))
	}
	lim := DefaultLimits()
	lim.For, lim.MaxConns = life, c.MaxConns
	fmt.Fprintf(stderr, "etcdbench net: listening on %s for %v; on another node: etcdbench net --peers %s --token ...\n", ln.Addr(), life, ln.Addr())
	s, err := Serve(ctx, ln, c.Token, lim)
	fmt.Fprintf(stderr, "etcdbench net: served %d connections (%d refused over --max-conns, %d not this protocol, %d with a wrong token), %d bytes in, %d out\n",
		s.Conns, s.Refused, s.BadHellos, s.BadTokens, s.BytesIn, s.BytesOut)
	if err == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// PeerNetworkFile is PeerNetwork of the saved result at path, as the
// flags --peer-rtt and --peer-jitter would give it; errors are usage
// errors naming the file.
func PeerNetworkFile(path string) (rtt, jitter string, err error) {
	rs, err := result.ReadFiles([]string{path})
	if err != nil {
		return "", "", run.Usagef("--peer-rtt-from: %v", err)
	}
	r, j, _, err := PeerNetwork(rs[0])
	if err != nil {
		return "", "", run.Usagef("--peer-rtt-from %s: %v (save one with etcdbench net --peers ... -o json)", path, err)
	}
	return r.String(), j.String(), nil
}
