package etcdside

import (
	"context"
	"etcdbench/internal/etcdcluster"
	"time"

	"etcdbench/internal/capacity/sweep"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/verdict"
)

// Command is `etcd capacity`'s sweep as its flags give it: the ladder's
// start, top, factor and resolution, each step's length, and whether a
// single embedded member's syncs are traced.
type Command struct {
	Start, Max, Factor, Resolution float64
	Step                           time.Duration
	Trace                          bool
}

// Config is the command's sweep, validated (errors wrap sweep.ErrConfig).
func (c Command) Config() (sweep.Config, error) {
	sc := SweepConfig(c.Start, c.Max, c.Factor, c.Resolution, c.Step, verdict.Defaults(), "the members'", "")
	return sc, sc.Validate()
}

// largest is the largest step's load: xl's shape at the top rate.
func (c Command) largest() etcdload.CheckPreset {
	p := etcdload.CheckPresets[len(etcdload.CheckPresets)-1]
	p.Rate = c.Max
	return p
}

// Space is the free space the sweep needs on each of members: the
// largest step's keys stay until it ends.
func (c Command) Space(members int) int64 { return etcdrun.CheckSpace(c.largest(), c.Step, members) }

// Bench is the sweep's Bench on a cluster, embedded on this machine or
// not, whose members beat at heartbeat (0: etcd's default) and were put
// peerRTT apart (0: none).
func (c Command) Bench(sc sweep.Config, embedded bool, heartbeat, peerRTT time.Duration) func(context.Context, etcdload.Load, etcdload.BenchOptions) (*etcdload.Outcome, error) {
	return CapacityBench(CapacitySpec{Sweep: sc, Step: c.Step, Thresholds: verdict.CheckPerfDefaults(),
		Embedded: embedded, Heartbeat: heartbeat, PeerRTT: peerRTT, Limits: LimitDefaults(), Trace: c.Trace, MaxStepPuts: c.largest().Puts(c.Step)})
}

// Spec is the sweep's run s (the command's) on the embedded members o:
// their options, the space they need and the Bench that names limits
// against their heartbeat and round trip.
func (c Command) Spec(s etcdrun.Spec, sc sweep.Config, o etcdcluster.Options) etcdrun.Spec {
	s.Embedded, s.Space = o, c.Space(o.Members)
	s.Bench = c.Bench(sc, true, o.HeartbeatInterval, o.PeerRTT)
	return s
}
