package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// checkPresetNames lists the presets for messages: "s, m, l or xl".
func checkPresetNames() string {
	var names []string
	for _, p := range etcdload.CheckPresets {
		names = append(names, p.Name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// newEtcdCheckCmd is `etcdbench etcd check`: etcdctl check perf's load
// models and rules, with the figures etcdctl does not print.
func newEtcdCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &etcdFlags{}
	cf := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check --load s|m|l|xl --dir DIR | --endpoints URLS --yes",
		Short: "Run etcdctl check perf's loads and rules, with the latencies and disk metrics it lacks",
		Long: `Runs the load of 'etcdctl check perf --load L' - 150, 1000, 8000 or 15000
puts/s from 50, 200, 500 or 1000 clients (a connection each) for 60 s, new
random 256-byte keys with 1024-byte values - and judges it by etcdctl's rules:
no failed put, throughput above 90 % of the target, slowest put at most
0.5 s, latency standard deviation at most 0.1 s. It also reports what etcdctl
does not print: latency percentiles, a per-second series, errors by kind,
the service times as etcdctl measures them, and the members' own WAL fsync
and backend commit histograms, judged against etcd's limits.

Latencies count from each put's due time (an open loop), so waiting for a
free client counts; etcdctl times only the call.` + exitCodesHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := resolveCheck(cmd, stderr, f, cf)
			if err != nil {
				return err
			}
			return runEtcd(cmd.Context(), s, f.out.output, stdout)
		},
	}
	cf.register(cmd.Flags())
	f.register(cmd.Flags())
	return cmd
}

// checkFlags are the flags of `etcd check` alone: the preset and
// overrides of etcdctl's limits.
type checkFlags struct {
	load            string
	duration        string
	ratio           float64
	slowest, stddev string
}

func (c *checkFlags) register(fs *pflag.FlagSet) {
	d := verdict.CheckPerfDefaults()
	fs.StringVar(&c.duration, "duration", "", "run this long instead of the preset's 60s (e.g. 10s for a quick look); the rules stay etcdctl's")
	fs.StringVar(&c.load, "load", "s", "etcdctl check perf's load model: "+checkPresetNames()+" (or small, medium, large, xLarge)")
	fs.Float64Var(&c.ratio, "min-throughput-ratio", d.ThroughputRatio.Limit, "pass when puts/s over the target rate is above this (etcdctl's rule)")
	fs.StringVar(&c.slowest, "max-slowest", units.FromSeconds(d.Slowest.Limit).String(), "pass when the slowest put took at most this (etcdctl's rule)")
	fs.StringVar(&c.stddev, "max-stddev", units.FromSeconds(d.Stddev.Limit).String(), "pass when the put latency's standard deviation is at most this (etcdctl's rule)")
}

// thresholds are etcdctl's limits with the flags' overrides.
func (c *checkFlags) thresholds(cmd *cobra.Command) (verdict.CheckPerfThresholds, error) {
	th := verdict.CheckPerfDefaults()
	if cmd.Flags().Changed("min-throughput-ratio") {
		if c.ratio <= 0 || c.ratio > 1 || math.IsNaN(c.ratio) {
			return th, run.Usagef("--min-throughput-ratio %g: want more than 0 and at most 1", c.ratio)
		}
		th.ThroughputRatio.Override(c.ratio, "--min-throughput-ratio")
	}
	for _, o := range []struct {
		flag, val string
		th        *verdict.Threshold
	}{{"max-slowest", c.slowest, &th.Slowest}, {"max-stddev", c.stddev, &th.Stddev}} {
		if !cmd.Flags().Changed(o.flag) {
			continue
		}
		d, err := units.ParseDuration(o.val)
		if err != nil || d <= 0 {
			return th, run.Usagef("--%s %q: want a positive duration such as 500ms", o.flag, o.val)
		}
		o.th.Override(d.Seconds(), "--"+o.flag)
	}
	return th, nil
}

// resolveCheck checks --load and the limits and builds the preset's load
// on the target the shared flags give.
func resolveCheck(cmd *cobra.Command, stderr io.Writer, f *etcdFlags, c *checkFlags) (etcdrun.Spec, error) {
	p, ok := etcdload.LookupCheckPreset(c.load)
	if !ok {
		return etcdrun.Spec{}, run.Usagef("--load %q: want %s (etcdctl check perf's load models; small, medium, large, xLarge also work)", c.load, checkPresetNames())
	}
	th, err := c.thresholds(cmd)
	if err != nil {
		return etcdrun.Spec{}, err
	}
	d := p.Duration
	if c.duration != "" {
		v, err := units.ParseDuration(c.duration)
		if err != nil || v <= 0 {
			return etcdrun.Spec{}, run.Usagef("--duration %q: want a positive duration such as 30s", c.duration)
		}
		d = v
	}
	if err := f.refuseWrites(fmt.Sprintf("etcd check --load %s sends %s (deleted afterwards)", p.Name, etcdload.CheckPlan(p, d))); err != nil {
		return etcdrun.Spec{}, err
	}
	if err := f.where(cmd); err != nil {
		return etcdrun.Spec{}, err
	}
	l := p.Load()
	l.Total, l.Duration = 0, d
	s, err := f.spec(cmd, stderr, l, "")
	if err != nil {
		return s, err
	}
	s.Space = etcdrun.CheckSpace(p, d, f.embed.Members())
	s.Name = "etcd-check-" + p.Name
	s.Bench = func(ctx context.Context, l etcdload.Load, o etcdload.BenchOptions) (*etcdload.Outcome, error) {
		return etcdload.Check(ctx, etcdload.CheckSpec{Preset: p, Load: l, Thresholds: th}, o)
	}
	return s, nil
}
