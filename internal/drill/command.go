package drill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"etcdbench/internal/diagnose/data/cost"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/fusedelay"
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

  kill-leader         the leader's process killed (SIGKILL), then restarted
                      on its data
  stop-leader         the leader frozen (SIGSTOP) for --fault-for, then thawed
  partition-leader    the leader cut off from its peers for --fault-for (its
                      clients still reach it), then healed
  slow-follower-disk  every sync of a follower's disk --sync-delay slower for
                      --fault-for (the members' data on FUSE; skipped where
                      FUSE is not available)
  defrag-leader       the leader defragmented, its db filled to --db-size
  defrag-member       a follower (or --member) defragmented, likewise
  add-member          a fourth member added as a learner, caught up from the
                      leader's whole db (--db-size), then promoted
  move-leader         the leadership handed over with etcd's MoveLeader

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

On a cluster of yours (--endpoints URLS --yes) a drill only moves the
leader (to --member, then back) and defragments one member (--member,
never the leader unless named), under the same load, under its own
prefix, deleted after; every other fault is refused. See docs/drill.md.`

// Command is `etcdbench drill`'s flags, as given.
type Command struct {
	Dir    string
	Faults []string
	Rounds int
	Rate   float64
	// Clients is 0 for check perf's at Rate.
	Clients                                 int
	FaultFor, Before, After, RequestTimeout string
	DBSize, SyncDelay                       string
	// Endpoints, Yes, TLS and Member: a cluster of the user's, the
	// consent to write to it, how to reach it, and the member drilled.
	Endpoints []string
	Yes       bool
	TLS       etcdload.TLSFiles
	Member    string
	Embedded  tune.EmbeddedFlags
	Args      []string
	// Progress is a terminal for the live line, or nil.
	Progress io.Writer
}

// Short is the drill's line in the command list.
const Short = "Time what clients see when an etcd member fails: killed, frozen, cut off or its leadership moved"

// Register adds the drill's flags (but the report's) to fs.
func (c *Command) Register(fs *pflag.FlagSet) {
	small := etcdload.CheckPresets[0]
	fs.StringVar(&c.Dir, "dir", "", "directory on the disk to test: the members' data go in a scratch directory inside it, removed afterwards")
	fs.StringSliceVar(&c.Faults, "faults", nil, "the faults to inject, each on a fresh cluster: "+strings.Join(Faults, ", ")+" (default: all; with --endpoints: "+strings.Join(External, ", ")+")")
	fs.StringSliceVar(&c.Endpoints, "endpoints", nil, "drill a running cluster of yours instead (one client URL per member): only "+strings.Join(External, " and ")+", with --yes")
	fs.BoolVar(&c.Yes, "yes", false, "with --endpoints: write the load's puts (under its own prefix, deleted after), move the leader (and back) and defragment a member")
	fs.StringVar(&c.Member, "member", "", "the member defrag-member defragments and move-leader hands the leadership to, by name (default: the first follower; the leader only when named)")
	c.TLS.Register(fs)
	fs.IntVar(&c.Rounds, "rounds", 1, "times each fault runs (the report gives the median)")
	fs.Float64Var(&c.Rate, "rate", small.Rate, "puts per second of the steady load (check perf's "+small.Alias+")")
	fs.IntVar(&c.Clients, "clients", 0, "clients of the steady load, a connection each (default: check perf's for the rate); the drill adds one for every put due within a request timeout, so that puts stuck on a lost member hold back no others")
	fs.StringVar(&c.FaultFor, "fault-for", "10s", "how long a frozen or cut-off leader stays so")
	fs.StringVar(&c.Before, "before", "5s", "the load before each fault")
	fs.StringVar(&c.After, "after", "5s", "the load after each fault has ended")
	fs.StringVar(&c.DBSize, "db-size", "100MB", "defrag-leader, defrag-member, add-member: the live data the db is filled with before the load: what a defragmentation copies, what a new member receives")
	fs.StringVar(&c.SyncDelay, "sync-delay", "200ms", "slow-follower-disk: how long each sync of the follower's disk waits for --fault-for")
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
	Faults []string
	// Skipped says which fault of the default ones this machine cannot
	// inject, and why.
	Skipped string
	Rounds  int
	Cluster etcdcluster.Options
	// Config is each fault's, but its Fault.
	Config
}

// Space is the free space a drill needs: three members (four with
// add-member), each one's filled db twice (a defragmentation writes a
// copy; a new member receives the db beside the one it replaces).
func (s Setting) Space() int64 {
	n := int64(3)
	if slices.Contains(s.Faults, AddMember) {
		n = 4
	}
	return session.EmbeddedSpace(int(n)) + n*2*s.DBSize
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
	if fault == SlowFollower {
		p["sync_delay_ns"] = s.SyncDelay.Nanoseconds()
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
	s.Member, s.MoveBack = c.Member, len(c.Endpoints) > 0
	faults := c.Faults
	if len(faults) == 0 {
		faults = Faults
		if len(c.Endpoints) > 0 {
			faults = External
		}
	}
	for _, f := range faults {
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
	}{{"--fault-for", c.FaultFor, &s.FaultFor}, {"--before", c.Before, &s.Before}, {"--after", c.After, &s.After}, {"--request-timeout", c.RequestTimeout, &s.Load.RequestTimeout}, {"--sync-delay", c.SyncDelay, &s.SyncDelay}} {
		v, err := units.ParseDuration(d.val)
		if err != nil || v <= 0 {
			return s, run.Usagef("%s %q: want a positive duration such as 5s", d.flag, d.val)
		}
		*d.to = v
	}
	if len(c.Endpoints) > 0 {
		return s, c.resolveRemote(&s)
	}
	if slices.Contains(s.Faults, SlowFollower) {
		if err := fusedelay.Usable(); err != nil {
			if len(c.Faults) > 0 {
				return s, run.Usagef("--faults %s: this machine cannot slow a disk's syncs (%v): it needs FUSE (/dev/fuse, and root or fusermount3)", SlowFollower, err)
			}
			s.Faults = slices.DeleteFunc(s.Faults, func(f string) bool { return f == SlowFollower })
			s.Skipped = fmt.Sprintf("%s skipped: this machine cannot slow a disk's syncs (%v): it needs FUSE (/dev/fuse, and root or fusermount3)", SlowFollower, err)
		}
	}
	if slices.ContainsFunc(s.Faults, func(f string) bool { return faultNamed(f).filled }) {
		n, err := units.ParseSize(c.DBSize)
		if err != nil || n <= 0 {
			return s, run.Usagef("--db-size %q: want a positive size such as 100MB", c.DBSize)
		}
		s.DBSize = n
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
	c.load(&s)
	return s, nil
}

// load sets s's steady put load from the flags.
func (c *Command) load(s *Setting) {
	rt := s.Load.RequestTimeout
	s.Load = etcdload.CheckPresetAt(c.Rate).Load()
	s.Load.Rate, s.Load.RequestTimeout, s.Load.Target = c.Rate, rt, etcdload.TargetBalanced
	if c.Clients > 0 {
		s.Load.Clients = c.Clients
	}
	s.Load.Conns = min(s.Load.Conns, s.Load.Clients)
	s.Load.Clients = InFlight(s.Load.Clients, c.Rate, rt)
}

// resolveRemote checks the flags of a drill of the user's cluster.
func (c *Command) resolveRemote(s *Setting) error {
	eps := strings.Join(c.Endpoints, ",")
	for _, f := range s.Faults {
		if !slices.Contains(External, f) {
			return run.Usagef("--faults %s: on a cluster of yours a drill only moves the leader and defragments one member (%s): %s breaks a member; drill it on the drill's own cluster (--dir)", f, strings.Join(External, ", "), f)
		}
	}
	switch {
	case c.Dir != "":
		return run.Usagef("--dir and --endpoints are alternatives: the drill's own cluster on a disk, or yours")
	case !c.Yes:
		return run.Usagef("not writing to %s without --yes: the drill puts check perf's load under its own prefix (deleted after), moves the leader and back, and defragments one member", eps)
	}
	if (c.TLS.Cert == "") != (c.TLS.Key == "") {
		return run.Usagef("--cert and --key go together: give both or neither")
	}
	tlsOn := !c.TLS.Empty()
	for _, ep := range c.Endpoints {
		if !strings.Contains(ep, "://") {
			ep = map[bool]string{false: "http://", true: "https://"}[tlsOn] + ep
		}
		s.Load.Client.Endpoints = append(s.Load.Client.Endpoints, ep)
	}
	if tlsOn {
		cfg, err := c.TLS.Config()
		if err != nil {
			return run.Usage(err)
		}
		s.Load.Client.TLS = cfg
	}
	o, err := c.Embedded.Options() // the timeouts the cluster runs with, if given, for the judgements
	if err != nil {
		return err
	}
	s.Cluster = etcdcluster.Options{HeartbeatInterval: o.HeartbeatInterval, ElectionTimeout: o.ElectionTimeout}
	client := s.Load.Client
	c.load(s)
	s.Load.Client = client
	return nil
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
	if len(c.Endpoints) > 0 {
		return c.runRemote(ctx, s)
	}
	if c.Dir == "" {
		return nil, run.Usagef("--dir is required: the directory on the disk whose members are drilled, e.g. --dir /var/lib/etcd (or --endpoints: a cluster of yours)")
	}
	ses, err := session.Open(session.Options{
		Dir: c.Dir, Need: s.Space(), Hint: "a drill's three members need it (with defrag-leader, a smaller --db-size needs less)",
		Args: c.Args, Progress: c.Progress, Steps: len(s.Faults) * s.Rounds,
	})
	if err != nil {
		return nil, err
	}
	defer ses.Close(&err)
	return s.each(ctx, ses, func(f string) (*Outcome, error) { return s.once(ctx, ses, f) })
}

// each runs every fault --rounds times through once, the live line
// counting them, and finishes the session with a workload per fault
// that ran.
func (s Setting) each(ctx context.Context, ses *session.Session, once func(fault string) (*Outcome, error)) (*result.Result, error) {
	outs := map[string][]*Outcome{}
	var err error
	step := 0
	for r := 0; r < s.Rounds && err == nil; r++ {
		for _, f := range s.Faults {
			ses.Progress.Start(step, fmt.Sprintf("drill %s (round %d of %d)", f, r+1, s.Rounds))
			step++
			var o *Outcome
			if o, err = once(f); err != nil {
				break
			}
			outs[f] = append(outs[f], o)
		}
	}
	return ses.Finish(ctx, s.workloads(outs), err)
}

// runRemote drills the user's cluster: each fault in turn, --rounds
// times, on the cluster as it is.
func (c *Command) runRemote(ctx context.Context, s Setting) (res *result.Result, err error) {
	ses := session.External(c.Args, c.Progress, len(s.Faults)*s.Rounds)
	defer ses.Close(&err)
	rc, err := Dial(ctx, s.Load.Client)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return s.each(ctx, ses, func(f string) (*Outcome, error) {
		cfg := s.Config
		cfg.Fault = f
		o, err := Run(ctx, rc, cfg)
		if err != nil {
			return nil, fmt.Errorf("drill %s: %w", f, err)
		}
		return o, nil
	})
}

// workloads are a workload per fault that ran, the first saying which
// was skipped.
func (s Setting) workloads(outs map[string][]*Outcome) []result.Workload {
	var wls []result.Workload
	for _, f := range s.Faults {
		if len(outs[f]) > 0 {
			wls = append(wls, Fault(f, outs[f], s))
		}
	}
	if len(wls) > 0 && s.Skipped != "" {
		wls[0].Notes = append(wls[0].Notes, s.Skipped)
	}
	return wls
}

// onSlowDisks runs cfg on a cluster in dir whose members' data dirs are
// each a slow-syncing passthrough (fusedelay) of a directory beside it,
// fast until the fault slows one; everything is unmounted and removed
// before it returns.
func (s Setting) onSlowDisks(ctx context.Context, dir string, opts etcdcluster.Options, cfg Config) (o *Outcome, err error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	var disks []*fusedelay.FS
	defer func() {
		for _, d := range disks {
			err = errors.Join(err, d.Close())
		}
	}()
	for i := range 3 {
		backing, mount := filepath.Join(dir, fmt.Sprintf(".disk%d", i)), filepath.Join(dir, fmt.Sprintf("member%d", i))
		if err := errors.Join(os.Mkdir(backing, 0o700), os.Mkdir(mount, 0o700)); err != nil {
			return nil, err
		}
		d, err := fusedelay.New(backing, mount, 0)
		if err != nil {
			return nil, err
		}
		disks = append(disks, d)
	}
	opts.Dir, opts.OwnProcess = dir, true
	cl, err := etcdcluster.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer cl.Close() // before the disks are unmounted
	cfg.SlowDisk = func(i int, on bool) {
		d := time.Duration(0)
		if on {
			d = s.SyncDelay
		}
		disks[i].SetDelay(d)
	}
	return Run(ctx, cl, cfg)
}

// catchUpEntries is what an add-member drill's members keep of their raft
// log after a snapshot (etcd keeps 5,000): a member added later lacks
// what the log no longer holds and gets the whole db, as on a cluster
// that has run long.
const catchUpEntries = 100

// snapshotted are the options of an add-member drill's cluster: a
// snapshot within the fill (at half its puts, unless --snapshot-count is
// lower), its log compacted to catchUpEntries after it.
func (s Setting) snapshotted(o etcdcluster.Options) etcdcluster.Options {
	half := uint64(max(100, s.DBSize/fillValue/2))
	if o.SnapshotCount == 0 || o.SnapshotCount > half {
		o.SnapshotCount = half
	}
	o.SnapshotCatchUpEntries = catchUpEntries
	return o
}

// once runs fault f on a fresh cluster.
func (s Setting) once(ctx context.Context, ses *session.Session, f string) (*Outcome, error) {
	opts := s.Cluster
	if f == AddMember {
		opts = s.snapshotted(opts)
	}
	cfg := s.Config
	cfg.Fault = f
	cfg.Sizes = f == KillLeader
	var o *Outcome
	var err error
	if f == SlowFollower {
		o, err = s.onSlowDisks(ctx, filepath.Join(ses.Run.Scratch.Path, "etcd-slow"), opts, cfg)
	} else {
		var cl *etcdcluster.Cluster
		if cl, err = ses.StartEtcd(ctx, opts); err != nil {
			return nil, err
		}
		o, err = Run(ctx, cl, cfg)
		_ = ses.StopEtcd() // a member stopped the hard way does not change what the fault cost
	}
	if err != nil {
		return nil, fmt.Errorf("drill %s: %w", f, err)
	}
	if o.Sizes != nil {
		// The members are gone: the probes have the disk to themselves.
		sz := *o.Sizes
		sz.Rejoin = s.Heartbeat() // it restarts into a cluster that has a leader
		p, err := cost.Predict(ctx, ses.Run.Scratch.Path, sz)
		if err != nil {
			return nil, fmt.Errorf("drill %s: predicting the restart: %w", f, err)
		}
		o.RestartPredicted = p.Restart
	}
	return o, nil
}
