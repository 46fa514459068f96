package main

import (
	"fmt"
	"io"
	"net"
	"time"

	"github.com/spf13/cobra"

	"etcdbench/internal/exporter"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
)

// exporterFlags are the flags of `etcdbench exporter`.
type exporterFlags struct {
	listen    string
	webConfig string
	pids      []int
	dataDirs  []string
	interval  string
	capacity  []string
	metrics   []string
}

func newExporterCmd(_, stderr io.Writer) *cobra.Command {
	f := &exporterFlags{}
	cmd := &cobra.Command{
		Use:   "exporter [--listen :9479] [--web.config.file FILE] [--pid PID]... [--data-dir DIR]... [--capacity FILE]...",
		Short: "Serve every local etcd's WAL and db sync latencies, traced by eBPF, as Prometheus metrics",
		Long: `Runs until stopped: finds the etcd processes on this machine in /proc (and
again every --interval, so a restarted or new member is traced too),
traces each with the eBPF tracer of 'etcdbench trace', and serves on
--listen /metrics (per member name and data dir: sync latency histograms
from 10 us with native histograms, with and without the time the syncing
thread waited for a CPU, bytes and writes per sync, syncs, writes and bytes,
the data dir's device counters from /proc/diskstats, lost events, an up
gauge, the exporter's own CPU) and / (a status page), over TLS and with
basic auth when --web.config.file says so. With no etcd running
it waits and says so. --pid and --data-dir narrow what it traces. With
--capacity, each member on a volume a saved capacity or check result
measured gets its headroom: its put rate now over that estimate. Needs root
(or CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE and CAP_SYS_PTRACE). Metrics,
alerts and cost: docs/exporter.md.

Exit codes: 2 bad flags, 3 it cannot serve (the address in use, no
privilege to load BPF programs), 129, 130 or 143 stopped by SIGHUP, SIGINT
or SIGTERM, every tracer detached.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config()
			if err != nil {
				return err
			}
			return exporter.ListenAndRun(cmd.Context(), f.listen, f.webConfig, cfg, stderr)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.listen, "listen", exporter.DefaultListen, "address to serve /metrics and the status page on")
	fs.StringVar(&f.webConfig, "web.config.file", "", "TLS and basic auth of /metrics and the status page: a web configuration file in Prometheus' exporter-toolkit format, as node_exporter's (docs/exporter.md); none: plain HTTP")
	fs.IntSliceVar(&f.pids, "pid", nil, "trace only these etcd processes (repeat or comma-separate); they must be etcd")
	fs.StringSliceVar(&f.dataDirs, "data-dir", nil, "trace only the etcd processes with these data dirs (as etcd sees them)")
	fs.StringArrayVar(&f.capacity, "capacity", nil, "a saved `etcdbench capacity -o json` or `check -o json` result (repeatable): each member on the volume it measured gets its headroom metrics; read again when it changes (docs/exporter.md#headroom)")
	fs.StringArrayVar(&f.metrics, "etcd-metrics-url", nil, "[MEMBER=]URL of an etcd member's plain-HTTP /metrics, where its put count is read (repeatable; without MEMBER: every member's); default: found from its --listen-metrics-urls or --listen-client-urls")
	fs.StringVar(&f.interval, "interval", exporter.DefaultInterval.String(), "how often /proc is scanned for new or restarted etcd processes")
	return cmd
}

// config checks the flags and turns them into the exporter's Config.
func (f *exporterFlags) config() (exporter.Config, error) {
	d, err := units.ParseDuration(f.interval)
	if err != nil || d < 100*time.Millisecond || d > time.Hour {
		return exporter.Config{}, run.Usagef("--interval %q: want a duration from 100ms to 1h, such as 5s", f.interval)
	}
	if _, _, err := net.SplitHostPort(f.listen); err != nil {
		return exporter.Config{}, run.Usagef("--listen %q: want host:port or :port, such as %s", f.listen, exporter.DefaultListen)
	}
	if err := exporter.ValidateWebConfig(f.webConfig); err != nil {
		return exporter.Config{}, run.Usage(fmt.Errorf("--web.config.file: %w", err))
	}
	for _, pid := range f.pids {
		if pid <= 0 {
			return exporter.Config{}, run.Usagef("--pid %d: want a process id", pid)
		}
		if err := exporter.CheckPID(procRoot, pid); err != nil {
			return exporter.Config{}, run.Usage(fmt.Errorf("--pid %d: %w", pid, err))
		}
	}
	urls, err := exporter.ParseMetricsURLs(f.metrics)
	if err != nil {
		return exporter.Config{}, err
	}
	return exporter.Config{Filter: exporter.Filter{PIDs: f.pids, DataDirs: f.dataDirs}, Interval: d, CapacityFiles: f.capacity, MetricsURLs: urls}, nil
}
