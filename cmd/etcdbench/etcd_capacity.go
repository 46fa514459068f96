package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"etcdbench/internal/capacity"
	"etcdbench/internal/capacity/etcdside"
	"etcdbench/internal/disk"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
)

// capacityFlags are the settings of `etcd capacity`'s sweep.
type capacityFlags struct {
	start, maxRate, step string
	factor, resolution   float64
	noTrace              bool
}

// newEtcdCapacityCmd is `etcdbench etcd capacity`: the capacity sweep
// with real puts on an embedded etcd (or an external cluster).
func newEtcdCapacityCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &etcdFlags{}
	cf := &capacityFlags{start: "150", maxRate: "20000", step: "10s", factor: etcdside.DefaultFactor, resolution: etcdside.DefaultResolution}
	cmd := &cobra.Command{
		Use:   "capacity --dir DIR | --endpoints URLS --yes",
		Short: "Find the highest put rate an etcd sustains within check perf's rules, and what limits it",
		Long:  etcdside.Help + exitCodesHelp,
		Example: `  etcdbench etcd capacity --dir /var/lib/etcd
  etcdbench etcd capacity --endpoints https://10.0.0.1:2379 --yes --cacert ca.pem`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, apart, err := resolveCapacity(cmd, stderr, f, cf)
			if err != nil {
				return err
			}
			if apart == nil {
				return runEtcd(cmd.Context(), s, f.out.output, stdout)
			}
			res, err := capacity.EtcdApart(cmd.Context(), s, apart)
			return conclude(cmd.Context(), stdout, f.out.output, res, err)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cf.start, "start", cf.start, "first put rate (puts/s)")
	fs.StringVar(&cf.maxRate, "max-rate", cf.maxRate, "highest put rate tried")
	fs.StringVar(&cf.step, "step", cf.step, "how long each step's puts run")
	fs.Float64Var(&cf.factor, "factor", cf.factor, "ratio between two rungs of the ladder")
	fs.Float64Var(&cf.resolution, "resolution", cf.resolution, "the bisection stops when the failing rate is within this fraction above the passing one")
	fs.BoolVar(&cf.noTrace, "no-trace", false, "do not time a single embedded member's WAL syncs with eBPF in each step (done by default when allowed: it tells the disk's time from the wait for a CPU)")
	f.register(fs)
	f.embed.Rows = true
	return cmd
}

// resolveCapacity is the run of etcd capacity's flags; with members put
// apart (--peer-rtt), the run is one member's and apart one for each
// round trip (capacity.EtcdApart).
func resolveCapacity(cmd *cobra.Command, stderr io.Writer, f *etcdFlags, cf *capacityFlags) (s etcdrun.Spec, apart []etcdrun.Spec, err error) {
	start, err := disk.ParseRate(cf.start)
	if err != nil {
		return s, nil, run.Usagef("--start: %v", err)
	}
	maxRate, err := disk.ParseRate(cf.maxRate)
	if err != nil {
		return s, nil, run.Usagef("--max-rate: %v", err)
	}
	step, err := units.ParseDuration(cf.step)
	if err != nil || step < time.Second {
		return s, nil, run.Usagef("--step %q: want a duration of at least 1s, such as 10s", cf.step)
	}
	ec := etcdside.Command{Start: start, Max: maxRate, Factor: cf.factor, Resolution: cf.resolution, Step: step, Trace: !cf.noTrace}
	sc, err := ec.Config()
	if err != nil {
		return s, nil, run.Usage(err)
	}
	if err := f.refuseWrites(fmt.Sprintf("etcd capacity sends puts at rising rates up to %.0f/s for %v a step (deleted after each step)", maxRate, step)); err != nil {
		return s, nil, err
	}
	if err := f.where(cmd); err != nil {
		return s, nil, err
	}
	l := etcdload.CheckPresets[0].Load()
	l.Total, l.Duration = 0, step
	if s, err = f.spec(cmd, stderr, l, ""); err != nil {
		return s, nil, err
	}
	s.Space, s.Name = ec.Space(f.embed.Members()), "etcd-capacity"
	s.Bench = ec.Bench(sc, len(f.endpoints) == 0, s.Embedded.HeartbeatInterval, s.Embedded.PeerRTT)
	each, err := f.embed.Apart()
	if err != nil || each == nil || len(f.endpoints) > 0 {
		return s, nil, err
	}
	for _, o := range each {
		apart = append(apart, ec.Spec(s, sc, o))
	}
	one := s.Embedded
	one.Members, one.PeerRTT, one.PeerJitter = 1, 0, 0
	return ec.Spec(s, sc, one), apart, nil
}
