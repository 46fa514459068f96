package etcdload

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// CheckPreset is one load model of `etcdctl check perf`: puts of random
// new keys at a fixed rate for a fixed time.
type CheckPreset struct {
	Name  string // s, m, l, xl
	Alias string // etcdctl's long name: small, medium, large, xLarge
	// Rate is the puts per second asked for (etcdctl's limit, a rate
	// limiter in front of the clients).
	Rate    float64
	Clients int
	// Conns is one per client: etcdctl makes a client (one gRPC
	// connection) for each requester.
	Conns    int
	Duration time.Duration
	// KeySize is the bytes after the prefix (etcdctl: 256, the varint of a
	// random 63-bit number and zeros); ValSize the bytes of every value
	// (etcdctl: 1024 zero bytes).
	KeySize, ValSize int
}

// CheckPresets are etcdctl check perf's load models (checkPerfCfgMap in
// verdict.CheckPerfSource; the key and value sizes are ksize and vsize
// of newCheckPerfCommand).
var CheckPresets = func() []CheckPreset {
	// Each load model's name, rate, clients and connections are
	// verdict's (verdict.CheckPerfLoads).
	ps := make([]CheckPreset, len(verdict.CheckPerfLoads))
	for i, l := range verdict.CheckPerfLoads {
		ps[i] = presetOf(l)
	}
	return ps
}()

// presetOf is the preset that sends l.
func presetOf(l verdict.CheckPerfLoad) CheckPreset {
	return CheckPreset{Name: l.Name, Alias: l.Alias, Rate: l.Rate, Clients: l.Clients, Conns: l.Conns,
		Duration: 60 * time.Second, KeySize: 256, ValSize: 1024}
}

// CheckPresetAt is check perf's load shape at rate: the preset (its
// clients, connections and sizes) of the smallest load that asks for at
// least that rate, the largest's above xl (verdict.CheckPerfLoadAt).
func CheckPresetAt(rate float64) CheckPreset { return presetOf(verdict.CheckPerfLoadAt(rate)) }

// LookupCheckPreset returns the preset of a name or etcdctl's alias of it
// (small, medium, large, xLarge); ok is false for anything else.
func LookupCheckPreset(name string) (p CheckPreset, ok bool) {
	for _, p := range CheckPresets {
		if name == p.Name || name == p.Alias {
			return p, true
		}
	}
	return CheckPreset{}, false
}

// Load returns the preset as a put load: an open loop at Rate from Clients
// clients over Conns connections for Duration, each put a new random key
// (etcdctl draws keys from 2^63) of KeySize bytes after the run's prefix.
func (p CheckPreset) Load() Load {
	l := DefaultLoad(OpPut)
	l.Conns, l.Clients, l.Rate = p.Conns, p.Clients, p.Rate
	l.Total, l.Duration = 0, p.Duration
	l.KeySize, l.ValSize = p.KeySize, p.ValSize
	l.KeySpaceSize, l.SequentialKeys = math.MaxInt64, false
	return l
}

// Puts is about how many puts the preset sends in d.
func (p CheckPreset) Puts(d time.Duration) int64 { return int64(math.Ceil(p.Rate * d.Seconds())) }

// CheckSpec is one `etcd check` run.
type CheckSpec struct {
	Preset CheckPreset
	// Load is the preset's Load with the cluster's endpoints and
	// credentials, and the duration the user chose.
	Load       Load
	Thresholds verdict.CheckPerfThresholds
}

// Check runs s.Load with Bench and judges it by etcdctl check perf's
// rules. The workload is named "etcd-check-<preset>"; its first verdicts
// are etcdctl's four rules on latencies counted from each put's due time,
// then the members' disk verdicts of Bench. It also records the
// latencies as etcdctl times them (the gRPC call alone, figures
// "service_*") and what etcdctl's rules say of those. An interrupted or
// failed run is not judged.
//
// Like etcdctl, whose rate limiter stops at the end, an open loop that
// fell behind stops sending at the end of its duration (and a grace; see
// drive): the rest of its backlog is left unsent (figure
// "unsent_requests") instead of drained for minutes, and fails the
// throughput rule.
func Check(ctx context.Context, s CheckSpec, o BenchOptions) (*Outcome, error) {
	m := &serviceMeter{}
	l := s.Load
	l.Client.DialOptions = append(slices.Clip(l.Client.DialOptions), grpc.WithChainUnaryInterceptor(m.intercept))
	out, err := Bench(ctx, l, o)
	if out == nil {
		return nil, err
	}
	judgeCheck(s, &out.Workload, out.Failed(), m.summary(), err == nil)
	return out, err
}

// putMethod is the gRPC method of a put.
const putMethod = "/etcdserverpb.KV/Put"

// serviceMeter times every successful put's gRPC call, as etcdctl times
// its requests: from the call to its return, without the wait for a free
// client or for the rate limiter. Atomics only, no lock per put.
type serviceMeter struct {
	n, sumNs, maxNs atomic.Int64
	sumSqNs2        atomic.Uint64 // float64 bits: the sum of squared nanoseconds
}

func (m *serviceMeter) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if method != putMethod {
		return invoke(ctx, method, req, reply, cc, opts...)
	}
	st := time.Now()
	err := invoke(ctx, method, req, reply, cc, opts...)
	if err == nil {
		m.add(time.Since(st))
	}
	return err
}

func (m *serviceMeter) add(d time.Duration) {
	ns := int64(d)
	m.n.Add(1)
	m.sumNs.Add(ns)
	for {
		old := m.sumSqNs2.Load()
		if m.sumSqNs2.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+float64(ns)*float64(ns))) {
			break
		}
	}
	for {
		old := m.maxNs.Load()
		if ns <= old || m.maxNs.CompareAndSwap(old, ns) {
			break
		}
	}
}

// serviceTimes are the count, mean, standard deviation and maximum of
// the put service times.
type serviceTimes struct {
	Count                 int64
	Mean, Stddev, Slowest time.Duration
}

func (m *serviceMeter) summary() serviceTimes {
	n := m.n.Load()
	if n == 0 {
		return serviceTimes{}
	}
	mean := float64(m.sumNs.Load()) / float64(n)
	variance := math.Max(0, math.Float64frombits(m.sumSqNs2.Load())/float64(n)-mean*mean)
	return serviceTimes{Count: n, Mean: time.Duration(mean), Stddev: time.Duration(math.Sqrt(variance)), Slowest: time.Duration(m.maxNs.Load())}
}

// judgeCheck renames the workload after the preset, describes it, adds
// the service-time figures and, when judged, etcdctl's verdicts ahead of
// the disk verdicts; failed is how many requests returned an error.
func judgeCheck(s CheckSpec, w *result.Workload, failed int64, svc serviceTimes, judged bool) {
	p, l := s.Preset, s.Load
	w.Name = "etcd-check-" + p.Name
	w.Description = fmt.Sprintf("etcdctl check perf --load %s: %g puts/s (open loop) from %d clients over %d connections for %v, "+
		"each a new random %d-byte key under %s with a %d-byte value", p.Name, l.Rate, l.Clients, l.Conns, l.Duration, l.KeySize, l.Prefix(), l.ValSize)
	if w.Parameters == nil {
		w.Parameters = map[string]any{}
	}
	w.Parameters["load"] = p.Name
	w.Parameters["preset_source"] = verdict.CheckPerfSource
	w.Parameters["preset_duration_ns"] = p.Duration.Nanoseconds()

	var slowest, stddev time.Duration
	if lat := w.Latency(requestLatency); lat != nil {
		slowest, stddev = time.Duration(lat.MaxNs), time.Duration(lat.StddevNs)
	}
	due := verdict.CheckPerfFigures{
		TargetRate: l.Rate, Rate: w.OpsPerSec, Slowest: slowest, Stddev: stddev, Failed: failed,
		Timing: "counted from the due time",
	}
	svcFig := due
	svcFig.Slowest, svcFig.Stddev, svcFig.Timing = svc.Slowest, svc.Stddev, "the gRPC call alone"
	ratio := 0.0
	if l.Rate > 0 {
		ratio = w.OpsPerSec / l.Rate
	}
	w.Figures = append(w.Figures,
		result.Figure{Name: "throughput_ratio", Value: ratio, Unit: "ratio", Description: "successful puts per second over the target rate (etcdctl: s.RPS / limit)"},
		result.Figure{Name: "slowest", Value: slowest.Seconds(), Unit: "s", Description: "slowest put, from its due time (the verdict's figure)"},
		result.Figure{Name: "stddev", Value: stddev.Seconds(), Unit: "s", Description: "standard deviation of the put latency from the due time (the verdict's figure)"},
		result.Figure{Name: "service_puts", Value: float64(svc.Count), Unit: "count", Description: "successful put calls timed as etcdctl times them: the gRPC call alone, no wait for a free client"},
		result.Figure{Name: "service_mean", Value: svc.Mean.Seconds(), Unit: "s", Description: "mean put service time (etcdctl's convention)"},
		result.Figure{Name: "service_stddev", Value: svc.Stddev.Seconds(), Unit: "s", Description: "put service time stddev (etcdctl's convention, its Stddev)"},
		result.Figure{Name: "service_slowest", Value: svc.Slowest.Seconds(), Unit: "s", Description: "slowest put service time (etcdctl's convention, its Slowest)"},
	)
	notes := []string{
		"latencies count from each put's due time (start + i/rate), so a put that waited for a free client is charged for the wait; " +
			"etcdctl times only the call (the service_* figures, measured the same way here) and its rate limiter (burst 1) " +
			"drops the permits it could not hand out, so an overloaded cluster shows lower throughput there but not the queueing delay",
	}
	if l.Duration != p.Duration {
		notes = append(notes, fmt.Sprintf("ran %v instead of etcdctl's %v (--duration): the verdicts use etcdctl's rules on a shorter or longer run", l.Duration, p.Duration))
	}
	if judged {
		vs := verdict.JudgeCheckPerf(s.Thresholds, due)
		w.Verdicts = append(vs, w.Verdicts...)
		notes = append(notes, fmt.Sprintf("etcdctl check perf's rules alone: %s from the due time, %s on service times as etcdctl measures them; "+
			"the overall result also counts the members' disk verdicts", verdict.Worst(vs), verdict.Worst(verdict.JudgeCheckPerf(s.Thresholds, svcFig))))
	}
	w.Notes = append(notes, w.Notes...)
}

// CheckPlan says in words what a check writes, for the confirmation an
// external cluster needs.
func CheckPlan(p CheckPreset, d time.Duration) string {
	return fmt.Sprintf("about %d puts (%g/s for %v) of %d-byte values under new %d-byte keys below %s<run-id>/",
		p.Puts(d), p.Rate, d, p.ValSize, p.KeySize, PrefixRoot)
}
