package etcdrun

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/result"
	"etcdbench/internal/session"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// Spec is one validated etcd run.
type Spec struct {
	// Load is what is sent; its Client.Endpoints name an external cluster,
	// or are empty for an embedded one.
	Load etcdload.Load
	// Embedded is the embedded etcd's settings, used when Load has no
	// endpoints; it runs in a scratch directory inside Dir.
	Embedded etcdcluster.Options
	Dir      string
	After    etcdload.Maintenance
	Args     []string
	// Progress is a terminal for the live line, or nil.
	Progress io.Writer
	// Bench runs the load (nil: etcdload.Bench); etcd check judges it too.
	Bench func(context.Context, etcdload.Load, etcdload.BenchOptions) (*etcdload.Outcome, error)
	// Space is the free space the embedded etcd needs (0:
	// session.EmbeddedSpace).
	Space int64
	// Name is the progress line's name for the run (empty: the load's).
	Name string
	// Failover, for three embedded members, kills the leader after the
	// load and times until another leads (etcdcluster.KillLeader): the
	// figure failover_seconds, and Measurement.Failover.
	Failover bool
}

// Measure starts the embedded etcd when there are no endpoints, runs the
// load with its metrics scraped around it, and stops and removes
// everything before it returns. A run ended by an error (a full quota, a
// user who may not write) still returns what it did before, with the
// error.
func Measure(ctx context.Context, s Spec) (*result.Result, error) {
	return measure(ctx, s, nil)
}

// Measurement is one measured etcd run: its result, and what an engine
// reads of it, typed: the load's workload, its request latency and the
// members as observed around the load.
type Measurement struct {
	Result *result.Result
	// Load is the load's workload, in Result.Workloads.
	Load *result.Workload
	// Request is the load's request latency (etcdload.Outcome.Request).
	Request *stats.Summary
	Members []observe.Member
	// Failover is the time a new leader took after the leader was
	// killed (Spec.Failover); nil when not measured.
	Failover *etcdcluster.Failover
}

// MeasureRun is Measure that also returns what the load measured, typed
// (the members as observed: none when their /metrics could not be read).
// Without a result it returns only the error.
func MeasureRun(ctx context.Context, s Spec) (*Measurement, error) {
	m := &Measurement{}
	res, err := measure(ctx, s, m)
	if res == nil {
		return nil, err
	}
	m.Result = res
	if len(res.Workloads) > 0 {
		m.Load = &res.Workloads[0]
	}
	return m, err
}

// measure runs s; m, when not nil, gets what the load measured, typed.
// The load's workload is the result's first.
func measure(ctx context.Context, s Spec, m *Measurement) (res *result.Result, err error) {
	bo := etcdload.BenchOptions{Thresholds: verdict.Defaults(), HTTP: etcdload.HTTPClient(s.Load.Client.TLS), After: s.After}
	var ses *session.Session
	var notes []string
	var cluster *etcdcluster.Cluster
	if len(s.Load.Client.Endpoints) == 0 {
		need := s.Space
		if need == 0 {
			need = session.EmbeddedSpace(s.Embedded.Members)
		}
		if ses, err = session.Open(session.Options{Dir: s.Dir, Need: need, Hint: "free some space for the embedded etcd", Args: s.Args, Progress: s.Progress, Steps: 1}); err != nil {
			return nil, err
		}
		defer ses.Close(&err)
		if cluster, err = ses.StartEtcd(ctx, s.Embedded); err != nil {
			return nil, err
		}
		defer func() {
			// Stopping is bounded (see Cluster.Close); a member that had to
			// be stopped the hard way is worth a note, not a failed run.
			if cerr := ses.StopEtcd(); cerr != nil && res != nil && len(res.Workloads) > 0 {
				w := &res.Workloads[len(res.Workloads)-1]
				w.Notes = append(w.Notes, cerr.Error())
			}
		}()
		s.Load.Client.Endpoints = cluster.Endpoints()
		bo.Targets, bo.PIDs = observe.EmbeddedTargets(cluster.MetricsURLs()), cluster.PIDs()
		notes = append(notes, fmt.Sprintf("embedded etcd: %d member(s) with data in %s", s.Embedded.Members, ses.EtcdDir()))
		if w := TimeoutWords(s.Embedded); w != "" {
			notes = append(notes, w)
		}
	} else {
		ses = session.External(s.Args, s.Progress, 1)
		defer ses.Close(&err)
		bo.Targets, bo.BestEffort = observe.ExternalTargets(s.Load.Client.Endpoints), true
		if pids := localMembers(s.Load.Client.Endpoints); pids != nil {
			bo.PIDs = pids
			notes = append(notes, fmt.Sprintf("external cluster on this machine: every endpoint is served by a process here (PIDs %v), so its members share this machine's CPUs and disks, and the environment describes their machine", pids))
		} else {
			notes = append(notes, "external cluster: the environment describes the machine etcdbench ran on, not the members")
		}
	}
	name := s.Load.Name()
	if s.Name != "" {
		name = s.Name
	}
	ses.Progress.Start(0, name)
	s.Load.OnSecond = ses.Progress.Requests()
	bench := etcdload.Bench
	if s.Bench != nil {
		bench = s.Bench
	}
	out, runErr := bench(ctx, s.Load, bo)
	if out == nil {
		return nil, runErr
	}
	out.Workload.Notes = append(notes, out.Workload.Notes...)
	if m != nil {
		m.Members, m.Request = out.Members, out.Request
	}
	if cluster != nil && wentWrong(out) {
		out.Workload.Notes = append(out.Workload.Notes, logNotes(cluster.Log())...)
	}
	if s.Failover && cluster != nil && s.Embedded.Members == 3 && runErr == nil {
		f := failover(ctx, cluster, &out.Workload)
		if m != nil {
			m.Failover = f
		}
	}
	return ses.Finish(ctx, []result.Workload{out.Workload}, runErr)
}

// TimeoutWords recommends the timeouts for embedded members put apart
// ("" when they are not): the round trip is known, so the report says
// which timeouts it needs (verdict.Timeouts) and which the members ran
// with.
func TimeoutWords(o etcdcluster.Options) string {
	rtt := o.LargestRTT()
	if rtt == 0 {
		return ""
	}
	hb, et := verdict.Timeouts(rtt)
	var ran []string
	if o.HeartbeatInterval > 0 {
		ran = append(ran, fmt.Sprintf("--heartbeat-interval %d", o.HeartbeatInterval.Milliseconds()))
	}
	if o.ElectionTimeout > 0 {
		ran = append(ran, fmt.Sprintf("--election-timeout %d", o.ElectionTimeout.Milliseconds()))
	}
	if len(ran) < 2 {
		ran = append(ran, "etcd's defaults for the rest (100 ms, 1 s)")
	}
	return fmt.Sprintf("the members were put %v apart (the largest round trip, jitter included): members that far apart want --heartbeat-interval %d --election-timeout %d (%s); these ran with %s", rtt, hb.Milliseconds(), et.Milliseconds(), verdict.TimeoutsSource, strings.Join(ran, ", "))
}

// failoverWait is the longest a new leader is waited for after the
// leader is killed: etcd's largest election timeout is 50 s.
const failoverWait = 60 * time.Second

// failover kills cluster's leader after the load and records how long
// the others took to elect a new one on w (nil when it could not be
// measured: a note says why).
func failover(ctx context.Context, cluster *etcdcluster.Cluster, w *result.Workload) *etcdcluster.Failover {
	fctx, cancel := context.WithTimeout(ctx, failoverWait)
	defer cancel()
	f, err := cluster.KillLeader(fctx)
	if err != nil {
		w.Notes = append(w.Notes, "the time to a new leader was not measured: "+err.Error())
		return nil
	}
	w.Figures = append(w.Figures, result.Figure{Name: "failover_seconds", Value: f.Took.Seconds(), Unit: "s",
		Description: "after the load, the leader's process was killed (a crash): the time until another member led, its election timeout and the round trips of the vote"})
	w.Notes = append(w.Notes, fmt.Sprintf("after the load the leader, member%d, was killed: another member led %v later", f.Killed, f.Took.Round(time.Millisecond)))
	return &f
}

// wentWrong reports whether a load had failed requests or a verdict that
// is not PASS: then the embedded etcd's log goes into the result.
func wentWrong(out *etcdload.Outcome) bool {
	if out.Failed() > 0 {
		return true
	}
	for _, v := range out.Workload.Verdicts {
		if v.Status != verdict.Pass {
			return true
		}
	}
	return false
}

// logLines is how many of the embedded etcd's last log lines a result
// keeps.
const logLines = 20

// logNotes turns the end of etcd's log (warnings and errors) into notes.
func logNotes(log string) []string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return []string{"etcd log: nothing at warn level or above"}
	}
	if len(lines) > logLines {
		lines = lines[len(lines)-logLines:]
	}
	out := []string{fmt.Sprintf("etcd log, the last %d lines at warn level and above:", len(lines))}
	for _, l := range lines {
		out = append(out, "etcd log: "+l)
	}
	return out
}

// CheckSpace is the free space an embedded check-perf-like run of p for d
// needs: the room of session.EmbeddedSpace for each member plus, per member,
// twice what its puts write (the WAL segments that wait for the next
// snapshot to be purged and the bbolt file that keeps every new key).
func CheckSpace(p etcdload.CheckPreset, d time.Duration, members int) int64 {
	perPut := int64(len(etcdload.PrefixRoot) + 64 + p.KeySize + p.ValSize) // 64: run id and record overhead
	return session.EmbeddedSpace(members) + int64(members)*2*p.Puts(d)*perPut
}

// localMembers are the processes on this machine that serve every
// endpoint, one each (sysinfo.ListeningPID), or nil when any endpoint is
// served elsewhere or could not be told: a member on this machine shares
// its CPUs with etcdbench's load and its neighbours, as an embedded one
// does, and its WAL syncs can be traced.
func localMembers(endpoints []string) []int {
	var pids []int
	for _, ep := range endpoints {
		u, err := url.Parse(ep)
		if err != nil || u.Host == "" {
			return nil
		}
		pid, err := sysinfo.ListeningPID("/proc", u.Host)
		if err != nil || pid == 0 || slices.Contains(pids, pid) {
			return nil
		}
		pids = append(pids, pid)
	}
	return pids
}
