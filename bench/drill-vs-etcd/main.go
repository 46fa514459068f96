// Command drill-vs-etcd (bench/drill-vs-etcd/run) holds `etcdbench
// drill`'s figures for a failed member to a real cluster's:
//
//   - truth: a three-member cluster of Debian's etcd 3.4 (/usr/bin/etcd,
//     each member its own process, in a cgroup of its own, on 127.0.0.1,
//     its data on --dir), under etcd's own benchmark tool (`benchmark put
//     --rate 150`, check perf's small load, at every member's endpoint)
//     and the bench's own probe: one put every 10 ms, open-loop, each
//     with its own timeout, through a client balanced over every member.
//     After --before, once every member names one leader in one term,
//     one fault strikes the leader: SIGKILL and a restart on its data
//     (kill-leader), SIGSTOP for --fault-for and SIGCONT (stop-leader),
//     or its peer traffic dropped both ways for --fault-for by iptables
//     (partition-leader; clients still reach it), or its db, filled
//     before the load to --db-size with 64 KiB values, defragmented with
//     etcd's Maintenance API on its endpoint (defrag-leader, the fault
//     ending as the call returns); then --after of load. The members run
//     without pre-vote (3.4's default) and etcdbench drill with
//     --pre-vote=false, or both with pre-vote (--pre-vote).
//     The outage is from the first late put of the fault (failed, or
//     returned more than 0.5 s after it was due) to the completion of the
//     first in-time put due after it; the new leader is the first other
//     member whose status says it leads (polled every 10 ms; 0 for a
//     defragmented leader that kept its place); the restart is from the
//     new process to its /health saying true; the longest outage among
//     the puts due after the fault's end is recorded beside the outage.
//   - beside it, `etcdbench drill` on the same fault, load and timeouts,
//     in a fresh directory.
//
// Every fault runs on a fresh cluster under each timeout profile
// (default: heartbeat 100 ms, election 1 s; slow: 500 ms, 2.5 s).
// Rounds alternate the order of the faults and of the two sides
// (reversed in even rounds). Per fault and profile it reports the
// medians and ranges of the truth's outage, new leader and restart,
// etcdbench's, and the per-round ratios etcdbench / truth; the goal is
// the outage and the new leader within 1.5x or 0.5 s (whichever is
// larger), median of at least 3 rounds.
//
// It is a measurement, not a test: exit 0 whatever the figures, 1 when a
// tool failed to run (a measurement included), 2 for bad flags, 130 when
// interrupted. Everything it starts (the members, benchmark, the
// iptables chain and the cgroups) is removed on exit, errors, Ctrl-C and
// SIGTERM.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/scratch"
	"etcdbench/internal/units"
)

const name = "drill-vs-etcd"

// The sides of a round.
const (
	sideTruth     = "truth"
	sideEtcdbench = "etcdbench"
)

var sideNames = []string{sideTruth, sideEtcdbench}

// profile is a pair of raft timeouts both sides run with.
type profile struct {
	Name      string        `json:"name"`
	Heartbeat time.Duration `json:"heartbeat_ns"`
	Election  time.Duration `json:"election_ns"`
}

// namedProfiles are the profiles --profiles knows by name; any other is
// given as HEARTBEAT/ELECTION in milliseconds (200/2000).
var namedProfiles = map[string]profile{
	"default": {"default", 100 * time.Millisecond, time.Second},
	"slow":    {"slow", 500 * time.Millisecond, 2500 * time.Millisecond},
}

func parseProfile(s string) (profile, error) {
	if p, ok := namedProfiles[s]; ok {
		return p, nil
	}
	h, e, ok := strings.Cut(s, "/")
	hb, herr := strconv.Atoi(h)
	el, eerr := strconv.Atoi(e)
	if !ok || herr != nil || eerr != nil || hb < 1 || el < 5*hb || el > 50000 {
		return profile{}, fmt.Errorf("--profiles: %q is neither default, slow nor HEARTBEAT/ELECTION in ms with the election at least 5 heartbeats (etcd's rule) and at most 50000", s)
	}
	return profile{s, time.Duration(hb) * time.Millisecond, time.Duration(el) * time.Millisecond}, nil
}

// params are the bench's settings, saved with the results.
type params struct {
	Profiles       []profile     `json:"profiles"`
	Faults         []string      `json:"faults"`
	Sides          []string      `json:"sides"`
	Rate           float64       `json:"rate"`
	Clients        int           `json:"clients"`
	KeySize        int           `json:"key_size"`
	ValSize        int           `json:"val_size"`
	FaultFor       time.Duration `json:"fault_for_ns"`
	Before         time.Duration `json:"before_ns"`
	After          time.Duration `json:"after_ns"`
	RequestTimeout time.Duration `json:"request_timeout_ns"`
	ProbeEvery     time.Duration `json:"probe_every_ns"`
	Late           time.Duration `json:"late_ns"`
	Goal           goal          `json:"goal"`
	// PreVote runs both sides with pre-vote: the truth's members with
	// --pre-vote (etcd 3.5's default) and etcdbench's as it runs them by
	// default; without it both run without (3.4's default, etcdbench
	// drill --pre-vote=false).
	PreVote bool `json:"pre_vote,omitempty"`
	// DBSize is what defrag-leader fills the db with before the load, on
	// both sides (--db-size).
	DBSize int64 `json:"db_size_bytes"`
}

type options struct {
	cmp.Common
	params
	Debian            string
	Benchmark         string
	BenchmarkVersions []string
	// Timeline keeps every probe put in the --json file.
	Timeline bool
}

// fillSpace is the free space defrag-leader needs for a db filled to
// size: three members, each one's db twice.
func fillSpace(size int64) int64 { return 3 * 2 * size }

// sideClients is the --clients given to etcdbench.
func (o options) sideClients() int { return o.Clients }

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds, c.FewestRounds = true, 3, 1
	preset := etcdload.CheckPresetAt(150)
	o := options{Common: c, Debian: "/usr/bin/etcd", Timeline: true, params: params{Rate: 150, Clients: preset.Clients, KeySize: preset.KeySize, ValSize: preset.ValSize,
		FaultFor: 10 * time.Second, Before: 5 * time.Second, After: 5 * time.Second, RequestTimeout: 5 * time.Second,
		ProbeEvery: 10 * time.Millisecond, Late: lateAfter, Goal: goal{Ratio: 1.5, Abs: 500 * time.Millisecond}}}
	profiles, faults, sides, dbSize := "default,slow", strings.Join(faultNames, ","), strings.Join(sideNames, ","), "100MB"
	versions := strings.Join(cmp.DefaultBenchmarkVersions, ",")
	err = cmp.ParseFlags(name, "Holds `etcdbench drill`'s outage, time to a new leader and restart to a real etcd 3.4 cluster's under the same faults, load and timeouts.", &o.Common, args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&profiles, "profiles", profiles, "timeout profiles: default (heartbeat 100 ms, election 1 s), slow (500 ms, 2.5 s) or HEARTBEAT/ELECTION in ms")
		fs.StringVar(&faults, "faults", faults, "faults, comma-separated: "+strings.Join(faultNames, ", "))
		fs.StringVar(&sides, "sides", sides, "sides of each round: truth, etcdbench")
		fs.Float64Var(&o.Rate, "rate", o.Rate, "background put rate (puts/s) of etcd's benchmark and of etcdbench's load")
		fs.IntVar(&o.Clients, "clients", o.Clients, "clients of the background load")
		fs.DurationVar(&o.FaultFor, "fault-for", o.FaultFor, "how long a stopped or cut-off leader stays so")
		fs.DurationVar(&o.Before, "before", o.Before, "load before the fault")
		fs.DurationVar(&o.After, "after", o.After, "load after the fault ended")
		fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "each probe put's timeout (and etcdbench's)")
		fs.DurationVar(&o.ProbeEvery, "probe-every", o.ProbeEvery, "the probe's interval between puts")
		fs.BoolVar(&o.PreVote, "pre-vote", o.PreVote, "run both sides with pre-vote: the truth's members with --pre-vote (etcd 3.5's default) and etcdbench drill as it runs by default; without it, both without (3.4's default: a member cut off campaigns and disrupts the cluster when the cut heals; etcdbench drill --pre-vote=false)")
		fs.StringVar(&dbSize, "db-size", dbSize, "defrag-leader: the live data the db is filled with before the load (64 KiB values), on both sides (etcdbench drill --db-size); 1 KiB = 1024")
		fs.BoolVar(&o.Timeline, "timeline", o.Timeline, "keep every probe put (due, latency, error) in the --json file")
		fs.StringVar(&o.Debian, "debian-etcd", o.Debian, "Debian's etcd 3.4 binary")
		fs.StringVar(&o.Benchmark, "benchmark", "", "etcd's benchmark binary; default: build go.etcd.io/etcd/v3/tools/benchmark")
		fs.StringVar(&versions, "benchmark-versions", versions, "etcd versions to try, in order, when building benchmark")
	})
	if err != nil {
		return o, err
	}
	bad := func(format string, a ...any) (options, error) {
		return o, cmp.UsageError{Err: fmt.Errorf(format, a...)}
	}
	for _, s := range strings.Split(profiles, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := parseProfile(s)
		if err != nil {
			return o, cmp.UsageError{Err: err}
		}
		o.Profiles = append(o.Profiles, p)
	}
	if len(o.Profiles) == 0 {
		return bad("--profiles: name at least one")
	}
	list := func(flag, s string, known []string) ([]string, error) {
		var out []string
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			if !slices.Contains(known, f) {
				return nil, cmp.UsageError{Err: fmt.Errorf("--%s: unknown %q (want %s)", flag, f, strings.Join(known, ", "))}
			}
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
		if len(out) == 0 {
			return nil, cmp.UsageError{Err: fmt.Errorf("--%s: name at least one of %s", flag, strings.Join(known, ", "))}
		}
		return out, nil
	}
	if o.Faults, err = list("faults", faults, faultNames); err != nil {
		return o, err
	}
	if o.Sides, err = list("sides", sides, sideNames); err != nil {
		return o, err
	}
	switch {
	case o.Rate < 1:
		return bad("--rate %g: want at least 1 put/s", o.Rate)
	case o.Clients < 1:
		return bad("--clients %d: want at least 1", o.Clients)
	case o.FaultFor < time.Second || o.Before < time.Second || o.After < time.Second:
		return bad("--fault-for, --before and --after: want at least 1s each")
	case o.RequestTimeout < o.Late:
		return bad("--request-timeout %v: want at least %v (a put later than that is late anyway)", o.RequestTimeout, o.Late)
	case o.ProbeEvery < time.Millisecond || o.ProbeEvery > time.Second:
		return bad("--probe-every %v: want 1ms to 1s", o.ProbeEvery)
	}
	if o.DBSize, err = units.ParseSize(dbSize); err != nil || o.DBSize < fillValue {
		return bad("--db-size %q: want a size of at least 64KiB such as 100MB", dbSize)
	}
	for _, v := range strings.Split(versions, ",") {
		if v = strings.TrimSpace(v); v != "" {
			o.BenchmarkVersions = append(o.BenchmarkVersions, v)
		}
	}
	return o, nil
}

// measurement is one fault under one profile in one round: the truth
// and etcdbench's answer.
type measurement struct {
	Round   int    `json:"round"`
	Profile string `json:"profile"`
	Fault   string `json:"fault"`
	// Order is the order the sides ran in, Load the 1-minute load
	// average as each started.
	Order     []string  `json:"order"`
	Load      []string  `json:"load"`
	Truth     *truthRun `json:"truth,omitempty"`
	Etcdbench *sideRun  `json:"etcdbench,omitempty"`
	// Notes are the sides that failed, and why.
	Notes []string `json:"notes,omitempty"`
}

// resultsFile is the --json file: everything measured, rewritten after
// each measurement so that an interrupted run keeps what it finished.
type resultsFile struct {
	Bench        string           `json:"bench"`
	Started      time.Time        `json:"started"`
	Params       params           `json:"params"`
	Etcd         string           `json:"etcd"`
	Benchmark    string           `json:"benchmark,omitempty"`
	Etcdbench    string           `json:"etcdbench,omitempty"`
	Partition    string           `json:"partition"`
	Measurements []measurement    `json:"measurements"`
	Summary      []row            `json:"summary"`
	Error        string           `json:"error,omitempty"`
	Machine      string           `json:"machine"`
	Load         [2]cmp.JSONFloat `json:"load_average"`
}

const partitionHow = "iptables DROP on lo in a chain of the run's own: the leader's peer port both ways, and the connections the leader opened to the others' peer ports (its packets told by its cgroup v2, the connections marked, the answers dropped too)"

// job is one fault under one profile.
type job struct {
	p     profile
	fault string
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	truthOn, sideOn := slices.Contains(o.Sides, sideTruth), slices.Contains(o.Sides, sideEtcdbench)
	if truthOn {
		if _, err := os.Stat(o.Abs(o.Debian)); err != nil {
			return cmp.UsageError{Err: fmt.Errorf("--debian-etcd %s: %w (apt-get install etcd-server)", o.Abs(o.Debian), err)}
		}
		if slices.Contains(o.Faults, faultPartition) {
			for _, tool := range []string{"iptables", "iptables-restore"} {
				if _, err := exec.LookPath(tool); err != nil {
					return cmp.UsageError{Err: fmt.Errorf("partition-leader needs %s (apt-get install iptables): %w", tool, err)}
				}
			}
			if _, err := cgroup2Root(); err != nil {
				return cmp.UsageError{Err: fmt.Errorf("partition-leader: %w", err)}
			}
		}
	}
	loadStart, _ := cmp.LoadAverage()
	common := o.Common
	if !sideOn && common.Etcdbench == "" {
		common.Etcdbench = "(not run)" // no build
	}
	env, err := cmp.Setup(ctx, common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	if slices.Contains(o.Faults, faultDefrag) {
		// Each side's three members, each one's filled db twice (a
		// defragmentation writes a new file beside the old); the sides
		// run one after the other.
		if err := scratch.CheckFree(env.Dir, fillSpace(o.DBSize)); err != nil {
			return cmp.UsageError{Err: fmt.Errorf("defrag-leader with --db-size %s: %w", units.FormatBytes(o.DBSize), err)}
		}
	}
	out := resultsFile{Bench: name, Started: time.Now().UTC(), Params: o.params, Etcd: o.Abs(o.Debian), Partition: partitionHow, Machine: cmp.Machine(env.Dir)}
	if sideOn {
		out.Etcdbench = env.Etcdbench
	}
	d := truthDrill{etcd: o.Abs(o.Debian), dir: env.Dir, o: o, progress: stderr}
	if truthOn {
		bin, err := os.MkdirTemp("", name+"-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(bin)
		bench, version := o.Abs(o.Benchmark), "given by --benchmark"
		if o.Benchmark == "" {
			if bench, version, err = cmp.BuildBenchmark(ctx, o.BenchmarkVersions, bin, stderr); err != nil {
				return err
			}
		}
		d.benchmark, out.Benchmark = bench, bench+" "+version
		// The members run in cgroups of their own: the partition tells
		// the leader's packets by its cgroup.
		if _, cerr := cgroup2Root(); cerr == nil {
			if d.cg, err = newCgroups(3); err != nil {
				return err
			}
			defer func() { err = errors.Join(err, d.cg.close()) }()
		}
		if slices.Contains(o.Faults, faultPartition) {
			if d.fw, err = newFirewall(ctx); err != nil {
				return err
			}
			defer func() { err = errors.Join(err, d.fw.heal(), d.fw.remove()) }()
		}
	}
	save := func() error {
		if o.JSON == "" {
			return nil
		}
		out.Summary = summarize(out.Measurements, o.Profiles, o.Faults, o.Goal)
		return cmp.WriteJSON(o.Abs(o.JSON), out)
	}
	var names []string
	for _, p := range o.Profiles {
		names = append(names, fmt.Sprintf("%s (heartbeat %v, election %v)", p.Name, p.Heartbeat, p.Election))
	}
	fmt.Fprintf(stdout, "%s: 3 members of %s, %s, load %g puts/s from %d clients, probe every %v, %d rounds; sides %s\n", name, out.Etcd,
		strings.Join(names, ", "), o.Rate, o.Clients, o.ProbeEvery, o.Rounds, strings.Join(o.Sides, ", "))
	var jobs []job
	for _, p := range o.Profiles {
		for _, f := range o.Faults {
			jobs = append(jobs, job{p, f})
		}
	}
	failed := 0
	for n := 1; n <= o.Rounds; n++ {
		for _, j := range cmp.Alternate(n, jobs) {
			ms := measure(ctx, d, env.Etcdbench, n, j, o, stderr)
			out.Measurements = append(out.Measurements, ms)
			if ctx.Err() != nil {
				out.Error = ctx.Err().Error()
				return errors.Join(ctx.Err(), save())
			}
			failed += len(ms.Notes)
			if err := save(); err != nil {
				return err
			}
		}
	}
	out.Summary = summarize(out.Measurements, o.Profiles, o.Faults, o.Goal)
	loadEnd, _ := cmp.LoadAverage()
	out.Load = [2]cmp.JSONFloat{cmp.JSONFloat(loadStart), cmp.JSONFloat(loadEnd)}
	var table bytes.Buffer
	printTable(io.MultiWriter(stdout, &table), out.Summary, o.Goal)
	if err := save(); err != nil {
		return err
	}
	if err := cmp.SaveResult(o.Abs(o.Results), cmp.Result{Bench: name, Source: "bench/" + name + "/run " + strings.Join(o.Args, " "),
		Machine: out.Machine, Rounds: o.Rounds, Figures: figures(out.Summary), Table: table.String()}, loadStart, out.Started); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d measurements failed (their notes are in the table and the --json file)", failed)
	}
	return nil
}

// measure runs round n's sides of j in their order (cmp.Alternate). A
// side that fails is a note; an interrupt ends it early.
func measure(ctx context.Context, d truthDrill, etcdbench string, n int, j job, o options, progress io.Writer) measurement {
	ms := measurement{Round: n, Profile: j.p.Name, Fault: j.fault}
	for _, side := range cmp.Alternate(n, o.Sides) {
		ms.Order, ms.Load = append(ms.Order, side), append(ms.Load, loadavg())
		fmt.Fprintf(progress, "round %d, %s, %s: %s (load %s) ...\n", n, j.p.Name, j.fault, side, ms.Load[len(ms.Load)-1])
		var err error
		switch side {
		case sideTruth:
			var t truthRun
			if t, err = d.run(ctx, j.p, j.fault); err == nil {
				if !o.Timeline {
					t.Timeline = nil
				}
				ms.Truth = &t
				fmt.Fprintf(progress, "  truth: leader %s, outage %.2f s (%d failed, %d slow puts, the last late one done at %.2f s), new leader %s after %s s, restart %s s, %d terms; after the fault's end (%.2f s) %d late puts, outage %.2f s (%.0f s)\n",
					t.Leader, t.OutageSeconds, t.Outage.Failed, t.Outage.Slow, t.LateUntil, orNone(t.NewLeader), fmtSecs(float64(t.NewLeaderSeconds)), fmtSecs(float64(t.RestartSeconds)), t.Terms,
					t.FaultEnd, t.LateAfterEnd, t.AfterEndOutage, t.Wall)
				if j.fault == faultDefrag {
					fmt.Fprintf(progress, "  truth: filled %d keys in %.1f s; the leader's db of %s defragmented in %.2f s (%s after), put p99 during %.2f s\n",
						t.FillKeys, t.FillSeconds, units.FormatBytes(t.DBSizeBytes), float64(t.DefragSeconds), units.FormatBytes(t.DBSizeAfter), float64(t.P99During))
				}
			}
		case sideEtcdbench:
			var s sideRun
			if s, err = runSide(ctx, etcdbench, d.dir, j.fault, j.p, o); err == nil {
				ms.Etcdbench = &s
				fmt.Fprintf(progress, "  etcdbench: outage %s s, after the fault's end %s s, new leader after %s s, restart %s s, defrag %s s of %s MiB, late until %s s, p99 during %s s, %s failed requests (%.0f s)\n",
					fmtSecs(float64(s.OutageSeconds)), fmtSecs(float64(s.AfterEndOutage)), fmtSecs(float64(s.NewLeaderSeconds)), fmtSecs(float64(s.RestartSeconds)),
					fmtSecs(float64(s.DefragSeconds)), fmtMiB(float64(s.DBSizeBytes)), fmtSecs(float64(s.LateUntil)), fmtSecs(float64(s.P99During)), fmtCount(float64(s.FailedRequests)), s.Wall)
			}
		}
		if ctx.Err() != nil {
			return ms
		}
		if err != nil {
			ms.Notes = append(ms.Notes, side+": "+oneLine(err.Error()))
			fmt.Fprintf(progress, "  %s failed: %v\n", side, err)
		}
	}
	return ms
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// loadavg is the 1-minute load average now, "?" when unknown.
func loadavg() string {
	l, err := cmp.LoadAverage()
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.2f", l)
}

// oneLine is s with its line breaks folded, for a note.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
