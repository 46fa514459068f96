package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/diagnose/cluster"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
)

// diagnoseClusterFlags are the flags of `diagnose --endpoints`.
type diagnoseClusterFlags struct {
	endpoints       []string
	window, timeout string
	logs            string
	out             outputFlags
	tls             tlsFlags
}

func (f *diagnoseClusterFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.endpoints, "endpoints", nil, "client URLs of the members (a,b,c): every member is asked at once, nothing is written")
	fs.StringVar(&f.window, "window", "30s", "time between the two /metrics scrapes the metrics rules judge")
	fs.StringVar(&f.timeout, "timeout", cluster.DefaultTimeout.String(), "deadline of every call to one member (a member slower than it is named as not answering)")
	fs.StringVar(&f.logs, "logs", "", "also run the log rules of 'diagnose logs' over this etcd log `FILE`")
	f.out.register(fs)
	f.tls.register(fs)
}

// resolve validates the flags into the cluster report's config.
func (f *diagnoseClusterFlags) resolve(cmd *cobra.Command) (cluster.Config, error) {
	c := cluster.Config{Reads: cluster.DefaultReads, Logs: f.logs, Args: commandLine(cmd)}
	if err := f.out.check(); err != nil {
		return c, err
	}
	eps := nonEmpty(f.endpoints)
	if len(eps) == 0 {
		return c, run.Usagef("no endpoints: give --endpoints URL,URL,... (the members' client URLs)")
	}
	w, err := units.ParseDuration(f.window)
	if err != nil || w <= 0 {
		return c, run.Usagef("--window %q: want a positive duration such as 30s", f.window)
	}
	t, err := units.ParseDuration(f.timeout)
	if err != nil || t <= 0 {
		return c, run.Usagef("--timeout %q: want a positive duration such as 5s", f.timeout)
	}
	c.Window, c.Timeout = w, t
	if err := f.tls.check(); err != nil {
		return c, err
	}
	c.Endpoints, c.TLS, c.HTTP, err = f.tls.endpointClients(cmd, eps)
	return c, err
}

// runDiagnoseCluster reports the cluster: exit 1 (run.ErrFailed) when a
// cause is found, 3 after the report when a member did not answer.
func runDiagnoseCluster(ctx context.Context, c cluster.Config, output string, stdout io.Writer) error {
	res, err := cluster.Run(ctx, c)
	if res == nil {
		return err
	}
	return conclude(ctx, stdout, output, res, err)
}

// newDiagnoseCmd is the parent of the commands that explain a live or
// saved etcd's slowness without writing to it; with --endpoints it is
// the report of a live cluster's health.
func newDiagnoseCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &diagnoseClusterFlags{}
	cmd := &cobra.Command{
		Use:   "diagnose --endpoints URLS | metrics | logs | wal | data",
		Short: "Explain a slow or unhealthy etcd: its cluster's health, metrics, logs, real WAL writes and data",
		Long: `With --endpoints, one read-only report of a live cluster's health: every
member is asked at once, through a client of its own, each call within
--timeout, for its status (version, leader, raft term and indexes,
revision, db size, learner), member list, alarms, a few hundred
serializable and linearizable reads and the hash of its key space at a
common revision, while its /metrics are scraped twice --window apart for
the rules of 'diagnose metrics' (and --logs for those of 'diagnose
logs'). Findings are ranked, each naming the member: a member not
answering, members that disagree (member lists, cluster ID, leader,
versions, hashes), alarms, lag, slow reads, and the metrics' causes.
Nothing is written. It ends within --window plus twice --timeout.

Exit codes: 0 healthy (or only warnings), 1 a cause was found, 2 bad
input (no endpoints, no endpoint is etcd, a TLS mismatch on every one),
3 a member did not answer (the others are reported in full).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("endpoints") {
				return run.Usagef("missing what to diagnose: etcdbench diagnose --endpoints URLS | metrics | logs | wal")
			}
			c, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			return runDiagnoseCluster(cmd.Context(), c, f.out.output, stdout)
		},
	}
	f.register(cmd.Flags())
	cmd.AddCommand(
		newDiagnoseMetricsCmd(stdout, stderr),
		newDiagnoseLogsCmd(stdout, stderr),
		newDiagnoseWALCmd(stdout, stderr),
		newDiagnoseDataCmd(stdout),
	)
	return cmd
}
