package drill

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/session"
	"etcdbench/internal/tune"
	"etcdbench/internal/units"
)

// Help is `etcdbench drill`'s long help, before the exit codes.
const Help = `Times what clients see when a member of a three-member etcd fails, on
this disk, with these timeouts and this peer network. For each fault in
turn a fresh embedded cluster (each member a process of its own, data in
a scratch directory on --dir, its peer links through this process) is
held under a steady put load (check perf's small load by default, every
client balanced over every member, as kube-apiserver's client is) and,
after --before, the fault strikes:

  kill-leader       the leader's process killed (SIGKILL), then restarted
                    on its data
  stop-leader       the leader frozen (SIGSTOP) for --fault-for, then thawed
  partition-leader  the leader cut off from its peers for --fault-for (its
                    clients still reach it), then healed
  move-leader       the leadership handed over with etcd's MoveLeader

Each fault reports the write outage (from the first put that failed or
took over 0.5 s to the first in time after it), the time to a new
leader, the elections, the failed and slow puts, the put p99 before,
during and after, and the killed member's restart, the median of
--rounds; each judged against what Kubernetes builds on etcd's writes
(the controllers' 10 s renew deadline and 15 s lease, the nodes' 40 s
lease, the apiserver's 1 s p99) and against raft's expectation of a new
leader within 2 x --election-timeout plus the round trip. A put a
follower had forwarded to a lost leader fails only at the clients'
--request-timeout: the outage depends on it as much as on etcd's flags.
See docs/drill.md.`

// Command is `etcdbench drill`'s flags, as given.
type Command struct {
	Dir    string
	Faults []string
	Rounds int
	Rate   float64
	// Clients is 0 for check perf's at Rate.
	Clients                                 int
	FaultFor, Before, After, RequestTimeout string
	Embedded                                tune.EmbeddedFlags
	Args                                    []string
	// Progress is a terminal for the live line, or nil.
	Progress io.Writer
}

// Short is the drill's line in the command list.
const Short = "Time what clients see when an etcd member fails: killed, frozen, cut off or its leadership moved"

// Register adds the drill's flags (but the report's) to fs.
func (c *Command) Register(fs *pflag.FlagSet) {
	small := etcdload.CheckPresets[0]
	fs.StringVar(&c.Dir, "dir", "", "directory on the disk to test: the members' data go in a scratch directory inside it, removed afterwards")
	fs.StringSliceVar(&c.Faults, "faults", slices.Clone(Faults), "the faults to inject, each on a fresh cluster: "+strings.Join(Faults, ", "))
	fs.IntVar(&c.Rounds, "rounds", 1, "times each fault runs (the report gives the median)")
	fs.Float64Var(&c.Rate, "rate", small.Rate, "puts per second of the steady load (check perf's "+small.Alias+")")
	fs.IntVar(&c.Clients, "clients", 0, "clients of the steady load, a connection each (default: check perf's for the rate); the drill adds one for every put due within a request timeout, so that puts stuck on a lost member hold back no others")
	fs.StringVar(&c.FaultFor, "fault-for", "10s", "how long a frozen or cut-off leader stays so")
	fs.StringVar(&c.Before, "before", "5s", "the load before each fault")
	fs.StringVar(&c.After, "after", "5s", "the load after each fault has ended")
	fs.StringVar(&c.RequestTimeout, "request-timeout", "5s", "each put's timeout (etcdctl's --command-timeout); a put the fault caught fails after it")
	c.Embedded.Register(fs)
	// A drill needs a leader to lose and a quorum left: three members.
	m := fs.Lookup("members")
	m.Hidden, m.DefValue = true, "3"
	_ = m.Value.Set("3")
}

// InFlight is the clients a drill's load needs at rate: clients (check
// perf's) plus one for every put due within a request timeout. A put
// stuck on a lost member holds its client until it fails; with too few
// clients, the others' puts would wait behind them and time the clients,
// not the cluster. kube-apiserver sends each request on its own.
func InFlight(clients int, rate float64, timeout time.Duration) int {
	return clients + int(math.Ceil(rate*timeout.Seconds()))
}

// Setting is one drill's settings, checked.
type Setting struct {
	Faults  []string
	Rounds  int
	Cluster etcdcluster.Options
	// Config is each fault's, but its Fault.
	Config
}

// Election is the cluster's election timeout (etcd's default when not
// set).
func (s Setting) Election() time.Duration {
	if s.Cluster.ElectionTimeout > 0 {
		return s.Cluster.ElectionTimeout
	}
	return etcdcluster.DefaultElection
}

// Heartbeat is the cluster's heartbeat interval.
func (s Setting) Heartbeat() time.Duration {
	if s.Cluster.HeartbeatInterval > 0 {
		return s.Cluster.HeartbeatInterval
	}
	return etcdcluster.DefaultHeartbeat
}

func (s Setting) parameters(fault string) map[string]any {
	p := map[string]any{
		"fault": fault, "rounds": s.Rounds, "rate": s.Load.Rate, "clients": s.Load.Clients,
		"before_ns": s.Before.Nanoseconds(), "fault_for_ns": s.FaultFor.Nanoseconds(), "after_ns": s.After.Nanoseconds(),
		"request_timeout_ns": s.Load.RequestTimeout.Nanoseconds(), "slow_put_ns": SlowPut.Nanoseconds(),
		"heartbeat_interval_ns": s.Heartbeat().Nanoseconds(), "election_timeout_ns": s.Election().Nanoseconds(),
		"members": 3,
	}
	if rtt := s.Cluster.LargestRTT(); rtt > 0 {
		p["peer_rtt_ns"] = rtt.Nanoseconds()
	}
	return p
}

// Resolve checks the flags and turns them into the drill's settings;
// errors are usage errors.
func (c *Command) Resolve() (Setting, error) {
	s := Setting{Rounds: c.Rounds}
	for _, f := range c.Faults {
		f = strings.TrimSpace(f)
		if !slices.Contains(Faults, f) {
			return s, run.Usagef("--faults: unknown fault %q: want %s", f, strings.Join(Faults, ", "))
		}
		if !slices.Contains(s.Faults, f) {
			s.Faults = append(s.Faults, f)
		}
	}
	if len(s.Faults) == 0 {
		return s, run.Usagef("--faults: give at least one of %s", strings.Join(Faults, ", "))
	}
	s.Faults = sorted(s.Faults)
	if c.Rounds < 1 {
		return s, run.Usagef("--rounds %d: want 1 or more", c.Rounds)
	}
	if c.Rate <= 0 || c.Clients < 0 {
		return s, run.Usagef("--rate %v --clients %d: want a positive rate and clients", c.Rate, c.Clients)
	}
	for _, d := range []struct {
		flag, val string
		to        *time.Duration
	}{{"--fault-for", c.FaultFor, &s.FaultFor}, {"--before", c.Before, &s.Before}, {"--after", c.After, &s.After}, {"--request-timeout", c.RequestTimeout, &s.Load.RequestTimeout}} {
		v, err := units.ParseDuration(d.val)
		if err != nil || v <= 0 {
			return s, run.Usagef("%s %q: want a positive duration such as 5s", d.flag, d.val)
		}
		*d.to = v
	}
	if n := c.Embedded.Members(); n != 3 {
		return s, run.Usagef("--members %d: a drill runs three members (a leader to lose and a quorum left)", n)
	}
	o, err := c.Embedded.Options()
	if err != nil {
		return s, err
	}
	o.Links = true // every fault may need to cut a member off
	s.Cluster = o
	rt := s.Load.RequestTimeout
	s.Load = etcdload.CheckPresetAt(c.Rate).Load()
	s.Load.Rate, s.Load.RequestTimeout, s.Load.Target = c.Rate, rt, etcdload.TargetBalanced
	if c.Clients > 0 {
		s.Load.Clients = c.Clients
	}
	s.Load.Conns = min(s.Load.Conns, s.Load.Clients)
	s.Load.Clients = InFlight(s.Load.Clients, c.Rate, rt)
	return s, nil
}

// Run runs every fault --rounds times, each on a fresh cluster, in a
// session on --dir, for the command line args with the live line on
// progress (nil: none), and gives a workload per fault.
func (c *Command) Run(ctx context.Context, args []string, progress, _ io.Writer) (res *result.Result, err error) {
	c.Args, c.Progress = args, progress
	s, err := c.Resolve()
	if err != nil {
		return nil, err
	}
	if c.Dir == "" {
		return nil, run.Usagef("--dir is required: the directory on the disk whose members are drilled, e.g. --dir /var/lib/etcd")
	}
	ses, err := session.Open(session.Options{
		Dir: c.Dir, Need: session.EmbeddedSpace(3), Hint: "a drill's three members need it",
		Args: c.Args, Progress: c.Progress, Steps: len(s.Faults) * s.Rounds,
	})
	if err != nil {
		return nil, err
	}
	defer ses.Close(&err)
	outs := map[string][]*Outcome{}
	step := 0
	for r := 0; r < s.Rounds && err == nil; r++ {
		for _, f := range s.Faults {
			ses.Progress.Start(step, fmt.Sprintf("drill %s (round %d of %d)", f, r+1, s.Rounds))
			step++
			var o *Outcome
			if o, err = s.once(ctx, ses, f); err != nil {
				break
			}
			outs[f] = append(outs[f], o)
		}
	}
	var wls []result.Workload
	for _, f := range s.Faults {
		if len(outs[f]) > 0 {
			wls = append(wls, Fault(f, outs[f], s))
		}
	}
	return ses.Finish(ctx, wls, err)
}

// once runs fault f on a fresh cluster.
func (s Setting) once(ctx context.Context, ses *session.Session, f string) (*Outcome, error) {
	cl, err := ses.StartEtcd(ctx, s.Cluster)
	if err != nil {
		return nil, err
	}
	cfg := s.Config
	cfg.Fault = f
	o, err := Run(ctx, cl, cfg)
	_ = ses.StopEtcd() // a member stopped the hard way does not change what the fault cost
	if err != nil {
		return nil, fmt.Errorf("drill %s: %w", f, err)
	}
	return o, nil
}
