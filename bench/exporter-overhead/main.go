// Command exporter-overhead (bench/exporter-overhead/run) measures what `etcdbench exporter` costs the
// etcd it watches: the same `etcdbench etcd put` load (cmp.PutLoad, at
// least 60,000 puts a run) against one etcd (an embedded etcd in a
// process of its own, bench/put-vs-etcd-benchmark/etcdserver) with no exporter and
// with the exporter attached and scraped every --scrape-every, in
// alternating order; it gives the median over rounds of the exporter
// run's throughput and p99 relative to the plain run of its round, the
// exporter's own CPU share (its process and its BPF programs' run time,
// as bench/trace-overhead measures the tracer) and its resident memory.
// Targets (issue 15): throughput ratio >= 0.97, CPU share < 1 %.
//
// It is a measurement, not a test: the exit status is 0 whatever the
// ratios, 1 when a tool failed to run, 2 for bad flags, 130 when
// interrupted. See bench/README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"time"

	"etcdbench/bench/internal/cmp"
)

const name = "exporter-overhead"

type options struct {
	cmp.Common
	cmp.PutLoad
	// ScrapeEvery is how often /metrics is read during the load, as a
	// Prometheus server would.
	ScrapeEvery time.Duration
}

// params are what the JSON file records of the settings.
type params struct {
	cmp.PutLoad
	ScrapeEveryNs int64 `json:"scrape_every_ns"`
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio = true
	o := options{Common: c, PutLoad: cmp.DefaultPutLoad(), ScrapeEvery: 5 * time.Second}
	err = cmp.ParseFlags(name, "etcd put throughput with and without `etcdbench exporter` attached (and scraped), alternated.", &o.Common, args, stderr,
		func(fs *flag.FlagSet) {
			o.PutLoad.Register(fs)
			fs.DurationVar(&o.ScrapeEvery, "scrape-every", o.ScrapeEvery, "how often the exporter's /metrics is read during the load")
		})
	if err != nil {
		return o, err
	}
	if err := o.PutLoad.Check(); err != nil {
		return o, err
	}
	if o.ScrapeEvery < 100*time.Millisecond {
		return o, cmp.UsageError{Err: fmt.Errorf("--scrape-every %v: want at least 100ms", o.ScrapeEvery)}
	}
	return o, nil
}

// The runs of a round.
const (
	runNone     = "no exporter"
	runExporter = "etcdbench exporter"
)

// Targets, as data with their source.
const (
	throughputTarget = 0.97
	shareTarget      = 0.01
	targetSource     = "issue 15: the exporter's throughput cost under 3 % (ratio >= 0.97) and its CPU under 1 % of the machine"
)

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	srv, stop, err := cmp.ServeEtcd(ctx, o.ModuleDir, env.Dir, stderr)
	if err != nil {
		return err
	}
	defer stop(&err)
	restore, err := cmp.EnableBPFStats()
	if err != nil {
		return err
	}
	defer restore()
	pid := strconv.Itoa(srv.PID())
	var shares []float64
	var rss []float64
	load := func(ctx context.Context, run string) (cmp.Measurement, json.RawMessage, error) {
		if run == runNone {
			ch, err := o.PutLoad.Run(ctx, env.Etcdbench, srv.URL)
			if err != nil {
				return cmp.Measurement{}, nil, err
			}
			m, err := cmp.PutMeasurement(run, ch)
			return m, cmp.RawJSON(ch.Stdout), err
		}
		addr, err := cmp.FreeAddr()
		if err != nil {
			return cmp.Measurement{}, nil, err
		}
		detach, xpid, err := cmp.Attach(ctx, 2*time.Second, env.Etcdbench, "exporter", "--listen", addr, "--pid", pid)
		if err != nil {
			return cmp.Measurement{}, nil, err
		}
		url := "http://" + addr + "/metrics"
		before, berr := scrapeWALSyncs(ctx, url)
		costBefore, cerr := cmp.SampleCost(xpid)
		if berr != nil || cerr != nil {
			_, _ = detach()
			return cmp.Measurement{}, nil, errors.Join(berr, cerr)
		}
		sctx, stopScrapes := context.WithCancel(ctx)
		scrapes := make(chan error, 1)
		go func() { scrapes <- scrapeEvery(sctx, url, o.ScrapeEvery) }()
		ch, lerr := o.PutLoad.Run(ctx, env.Etcdbench, srv.URL)
		stopScrapes()
		serr := <-scrapes
		costAfter, cerr := cmp.SampleCost(xpid) // still attached: the load's window
		after, aerr := scrapeWALSyncs(ctx, url)
		mem, merr := residentBytes(xpid)
		_, derr := detach()
		if err := errors.Join(lerr, serr, cerr, aerr, merr, derr); err != nil {
			return cmp.Measurement{}, nil, err
		}
		m, err := cmp.PutMeasurement(run, ch)
		if err != nil {
			return m, nil, err
		}
		proc, bpf := cmp.Share(costBefore, costAfter, runtime.NumCPU())
		m.Figures["exporter_process_share"], m.Figures["exporter_bpf_share"], m.Figures["exporter_share"] = proc, bpf, proc+bpf
		m.Figures["wal_syncs_counted"] = after - before
		m.Figures["exporter_rss_bytes"] = float64(mem)
		shares = append(shares, proc+bpf)
		rss = append(rss, float64(mem))
		return m, cmp.RawJSON(ch.Stdout), nil
	}
	var steps []cmp.Step
	for _, r := range []string{runNone, runExporter} {
		steps = append(steps, cmp.Step{Run: r, Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) { return load(ctx, r) }})
	}
	c := cmp.Comparison{
		Steps: steps,
		Pairs: []cmp.Pair{{Name: "exporter / none", Etcd: runExporter, Fio: runNone}},
		Metrics: []cmp.Metric{
			{Name: "throughput", Unit: cmp.UnitRate, Value: cmp.Figure("ops_per_sec"),
				Target: &cmp.Target{Metric: "throughput", Lo: throughputTarget, Source: targetSource}},
			{Name: "p99", Unit: cmp.UnitDuration, Value: cmp.Figure("p99_ns")},
		},
		Columns: []cmp.Column{
			{Head: "puts/s", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitRate, cmp.Figure("ops_per_sec")(m)) }},
			{Head: "p99", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitDuration, cmp.Figure("p99_ns")(m)) }},
			{Head: "WAL syncs counted", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitCount, cmp.Figure("wal_syncs_counted")(m)) }},
			{Head: "exporter CPU (process + BPF)", Value: shareColumn},
		},
		TargetSource: targetSource,
		Labels:       cmp.Labels{Subject: "exported", Base: "plain"},
	}
	out := cmp.JSONFile[params]{Started: time.Now().UTC(), Dir: env.Dir, Params: params{o.PutLoad, o.ScrapeEvery.Nanoseconds()}, Etcdbench: env.Etcdbench}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)
	fmt.Fprintf(stdout, "%s: %s, against one embedded etcd (pid %s, %s); exporter scraped every %s; %d rounds\n\n", name, o.PutLoad, pid, srv.URL, o.ScrapeEvery, o.Rounds)
	if err := c.Run(ctx, o.Rounds, stdout, stderr, &out.Runs, &out.Summary); err != nil {
		return err
	}
	return renderCost(stdout, shares, rss)
}

// shareColumn shows an exporter run's CPU share, its process's and its
// programs' parts.
func shareColumn(m cmp.Measurement) string {
	all, ok := m.Figures["exporter_share"]
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.2f %% (%.2f + %.2f)", 100*all, 100*m.Figures["exporter_process_share"], 100*m.Figures["exporter_bpf_share"])
}

// renderCost gives the median over rounds of the exporter's CPU share
// and its resident memory at the end of each load.
func renderCost(w io.Writer, shares, rss []float64) error {
	if len(shares) == 0 {
		return nil
	}
	med := cmp.Median(shares)
	met := "yes"
	if med >= shareTarget {
		met = "NO"
	}
	_, err := fmt.Fprintf(w, "\nexporter's own CPU (its process + its BPF programs' run time, bpf_stats) over the load, as a share of the machine's %d CPUs:\nmedian %.2f %% (range %.2f..%.2f %%), target < %.0f %%: %s\nexporter's resident memory after each load: median %.1f MiB (max %.1f MiB)\n",
		runtime.NumCPU(), 100*med, 100*slices.Min(shares), 100*slices.Max(shares), 100*shareTarget, met, cmp.Median(rss)/(1<<20), slices.Max(rss)/(1<<20))
	return err
}
