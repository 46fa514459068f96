package verdict

import (
	"fmt"
	"time"

	"etcdbench/internal/units"
)

// CheckPerfSource is where the rules of `etcdctl check perf` (and its load
// models, CheckPerfLoads) come from. The file is the same in
// v3.6.0, v3.7.1 and main of August 2026 apart from a report constructor's
// signature.
const CheckPerfSource = "etcdctl check perf: etcd v3.7.1 etcdctl/ctlv3/command/check.go, newCheckPerfCommand"

// CheckPerfLoad is one of etcdctl check perf's load models, by the rate
// it asks for.
type CheckPerfLoad struct {
	Name  string // --load: s, m, l, xl
	Alias string // etcdctl's long name: small, medium, large, xLarge
	// Rate is the puts per second asked for (cfg.limit, a rate limiter in
	// front of the clients).
	Rate float64
	// Clients is how many clients send the puts, each with one in
	// flight (cfg.clients): etcd never has more proposals waiting for
	// its WAL than that.
	Clients int
	// Conns is the gRPC connections: etcdctl makes a client (one
	// connection) for each requester.
	Conns int
}

// CheckPerfLoads are etcdctl check perf's load models (checkPerfCfgMap in
// CheckPerfSource), the one list of their names, rates, clients and
// connections: etcdload.CheckPresets sends them (with each one's duration
// and sizes), the disk's capacity model bounds its WAL batches by their
// clients, and sweep.CheckPerfMarks compares a capacity with them.
var CheckPerfLoads = []CheckPerfLoad{
	{Name: "s", Alias: "small", Rate: 150, Clients: 50, Conns: 50},
	{Name: "m", Alias: "medium", Rate: 1000, Clients: 200, Conns: 200},
	{Name: "l", Alias: "large", Rate: 8000, Clients: 500, Conns: 500},
	{Name: "xl", Alias: "xLarge", Rate: 15000, Clients: 1000, Conns: 1000},
}

// CheckPerfLoadAt is the smallest load model that asks for at least rate
// puts/s (the largest above xl's): the clients and connections a load at
// rate shaped like check perf's has.
func CheckPerfLoadAt(rate float64) CheckPerfLoad {
	for _, l := range CheckPerfLoads {
		if l.Rate >= rate {
			return l
		}
	}
	return CheckPerfLoads[len(CheckPerfLoads)-1]
}

// Mark is what a capacity compared with l cites: "etcdctl check perf
// --load s: 150 puts/s".
func (l CheckPerfLoad) Mark() string {
	return fmt.Sprintf("etcdctl check perf --load %s: %g puts/s", l.Name, l.Rate)
}

// CheckPerfThresholds are the pass rules of `etcdctl check perf`. The
// command line may override any of them.
type CheckPerfThresholds struct {
	Errors          Threshold // failed puts: at most this many (etcdctl: none)
	ThroughputRatio Threshold // achieved / target puts per second: above this
	Slowest         Threshold // the slowest put: at most this
	Stddev          Threshold // standard deviation of the put latency: at most this
}

// CheckPerfDefaults returns etcdctl check perf's rules.
func CheckPerfDefaults() CheckPerfThresholds {
	return CheckPerfThresholds{
		Errors: Threshold{
			ID: "check_perf_errors", Title: "failed puts", Limit: 0, Unit: "count",
			Source: CheckPerfSource + ": \"FAIL: too many errors\" when any request returned an error",
		},
		ThroughputRatio: Threshold{
			ID: "check_perf_throughput", Title: "throughput / target rate", Limit: 0.9, Unit: "ratio",
			Source: CheckPerfSource + ": \"FAIL: Throughput too low\" when s.RPS/float64(cfg.limit) <= 0.9",
		},
		Slowest: Threshold{
			ID: "check_perf_slowest", Title: "slowest put", Limit: (500 * time.Millisecond).Seconds(), Unit: "s",
			Source: CheckPerfSource + ": \"Slowest request took too long\" when s.Slowest > 0.5 (seconds)",
		},
		Stddev: Threshold{
			ID: "check_perf_stddev", Title: "put latency stddev", Limit: (100 * time.Millisecond).Seconds(), Unit: "s",
			Source: CheckPerfSource + ": \"Stddev too high\" when s.Stddev > 0.1 (seconds)",
		},
	}
}

// CheckPerfFigures are what the check perf rules read.
type CheckPerfFigures struct {
	TargetRate float64 // puts per second asked for
	Rate       float64 // successful puts per second over the run, its drain included
	Slowest    time.Duration
	Stddev     time.Duration // population standard deviation, as etcdctl's report computes it
	Failed     int64
	// Timing says in a few words how a latency was timed, e.g. "counted
	// from the due time"; it goes into the details.
	Timing string
}

// JudgeCheckPerf applies etcdctl check perf's four rules, in etcdctl's
// order: errors, throughput, slowest, stddev.
func JudgeCheckPerf(t CheckPerfThresholds, f CheckPerfFigures) []Verdict {
	timing := ""
	if f.Timing != "" {
		timing = " (" + f.Timing + ")"
	}
	e := t.Errors
	ev := Verdict{
		Check: e.ID, Title: e.Title, Value: float64(f.Failed), Unit: e.Unit, Limit: e.Limit, Comparison: "<=", Source: e.Source,
		Status: Pass, Detail: "no put failed",
	}
	if float64(f.Failed) > e.Limit {
		ev.Status = Fail
		ev.Detail = fmt.Sprintf("%d puts failed (their kinds are in the notes); etcdctl check perf fails on any error", f.Failed)
	}

	tr := t.ThroughputRatio
	ratio := 0.0
	if f.TargetRate > 0 {
		ratio = f.Rate / f.TargetRate
	}
	tv := Verdict{
		Check: tr.ID, Title: tr.Title, Value: ratio, Unit: tr.Unit, Limit: tr.Limit, Comparison: ">", Source: tr.Source,
		Status: Pass,
		Detail: fmt.Sprintf("%.1f puts/s of the %g asked for (%.1f %%), above %.0f %% of the target", f.Rate, f.TargetRate, 100*ratio, 100*tr.Limit),
	}
	if ratio <= tr.Limit {
		tv.Status = Fail
		tv.Detail = fmt.Sprintf("%.1f puts/s of the %g asked for (%.1f %%), not above %.0f %% of the target: the cluster did not keep up with this load model; the per-second series shows when it fell behind, the members' WAL fsync and backend commit figures whether the disk was the limit",
			f.Rate, f.TargetRate, 100*ratio, 100*tr.Limit)
	}

	return []Verdict{ev, tv,
		judgeAtMost(t.Slowest, f.Slowest, fmt.Sprintf("the slowest put%s took %%v", timing),
			"one stall is enough: the p99.9 and the per-second maximum show whether it was one or many"),
		judgeAtMost(t.Stddev, f.Stddev, fmt.Sprintf("put latencies%s spread with a standard deviation of %%v", timing),
			"the latency distribution and the per-second p99 show whether a few stalls or a slow disk throughout cause it"),
	}
}

// judgeAtMost passes a duration at or under th's limit. what has one %v
// for the value.
func judgeAtMost(th Threshold, d time.Duration, what, advice string) Verdict {
	v := Verdict{
		Check: th.ID, Title: th.Title, Value: d.Seconds(), Unit: th.Unit, Limit: th.Limit, Comparison: "<=", Source: th.Source,
		Status: Pass,
	}
	limit := units.FromSeconds(th.Limit)
	val := d.Round(time.Microsecond)
	if d.Seconds() > th.Limit {
		v.Status = Fail
		v.Detail = fmt.Sprintf(what+", over the %v limit; %s", val, limit, advice)
	} else {
		v.Detail = fmt.Sprintf(what+", within the %v limit", val, limit)
	}
	return v
}
