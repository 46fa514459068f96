package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/diagnose"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
)

// diagnoseMetricsFlags are the flags of `diagnose metrics`.
type diagnoseMetricsFlags struct {
	endpoints, metricsURLs, from []string
	window                       string
	out                          outputFlags
	prog                         progressFlags
	tls                          tlsFlags
}

func (f *diagnoseMetricsFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.endpoints, "endpoints", nil, "client URLs of the members (a,b,c): their /metrics are read, nothing is written")
	fs.StringSliceVar(&f.metricsURLs, "metrics-url", nil, "full /metrics URLs of the members (e.g. --listen-metrics-urls), instead of --endpoints")
	fs.StringArrayVar(&f.from, "from", nil, "a saved /metrics scrape (curl URL/metrics > FILE), FILE,FILE,... for several members; give it twice (before, after) for the difference")
	fs.StringVar(&f.window, "window", "30s", "time between the two scrapes: the diagnosis is about this window, not since start")
	f.out.register(fs)
	f.prog.register(fs)
	f.tls.register(fs)
}

// resolve validates the flags into the diagnosis' spec: the members'
// /metrics URLs (from --endpoints or --metrics-url) and the client that
// reads them, or the saved scrapes of --from.
func (f *diagnoseMetricsFlags) resolve(cmd *cobra.Command) (diagnose.MetricsSpec, error) {
	s := diagnose.MetricsSpec{Args: commandLine(cmd), Files: f.from}
	given := 0
	for _, n := range []string{"endpoints", "metrics-url", "from"} {
		if cmd.Flags().Changed(n) {
			given++
		}
	}
	switch {
	case f.out.check() != nil:
		return s, f.out.check()
	case given == 0:
		return s, run.Usagef("nothing to diagnose: give --endpoints URLS, --metrics-url URLS or --from FILE [--from FILE]")
	case given > 1:
		return s, run.Usagef("--endpoints, --metrics-url and --from are alternatives: give one")
	case len(f.from) > 2:
		return s, run.Usagef("--from %d times: give one saved scrape (since process start) or two (before and after)", len(f.from))
	}
	w, err := units.ParseDuration(f.window)
	if err != nil || w <= 0 {
		return s, run.Usagef("--window %q: want a positive duration such as 30s", f.window)
	}
	s.Window = w
	if len(f.from) > 0 {
		if len(f.tls.given(cmd)) > 0 {
			return s, run.Usagef("TLS flags are for --endpoints and --metrics-url, not --from")
		}
		return s, nil
	}
	if err := f.tls.check(); err != nil {
		return s, err
	}
	urls, flag := f.metricsURLs, "--metrics-url"
	if len(f.endpoints) > 0 {
		urls, flag = nil, "--endpoints"
		eps, err := withScheme(f.endpoints, len(f.tls.given(cmd)) > 0, flag)
		if err != nil {
			return s, err
		}
		for _, t := range observe.ExternalTargets(eps) {
			urls = append(urls, t.URL)
		}
	}
	if slices.Contains(urls, "") {
		return s, run.Usagef("empty URL in the list of members")
	}
	if urls, _, s.Client, err = f.tls.endpointClients(cmd, urls, flag); err != nil {
		return s, err
	}
	for i, u := range urls {
		s.Targets = append(s.Targets, diagnose.Target{Name: fmt.Sprintf("member%d", i), URL: u})
	}
	return s, nil
}

// finishDiagnosis reports a diagnosis (and the report files of the root's
// --html and --textfile) and maps a found cause to exit 1.
func finishDiagnosis(ctx context.Context, stdout io.Writer, output string, res *result.Result) error {
	return conclude(ctx, stdout, output, res, nil)
}

// newDiagnoseMetricsCmd is 'etcdbench diagnose metrics'.
func newDiagnoseMetricsCmd(stdout, _ io.Writer) *cobra.Command {
	f := &diagnoseMetricsFlags{}
	cmd := &cobra.Command{
		Use:   "metrics --endpoints URLS | --metrics-url URLS | --from FILE [--from FILE]",
		Short: "Name the cause of a slow etcd from two scrapes of its members' /metrics",
		Long: `Reads every member's /metrics twice, --window apart, and judges the
difference (so the answer is about now, not since the process started):
WAL fdatasync and backend commit p99, apply duration and slow applies,
peer round trips, heartbeat failures, leader changes, proposals, db size
against the quota and fragmentation, process CPU, Go GC and gRPC errors.
Rules with documented thresholds (docs/diagnose.md) turn them into ranked
findings - slow disk, CPU starvation, network, oversized db, leader
instability - each with its numbers and what to do. Writes nothing.

Exit codes: 0 healthy (or only warnings), 1 a cause was found, 2 bad
input, 3 a member could not be read.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			res, err := diagnose.Metrics(cmd.Context(), s)
			if err != nil {
				return err
			}
			return finishDiagnosis(cmd.Context(), stdout, f.out.output, res)
		},
	}
	f.register(cmd.Flags())
	return cmd
}
