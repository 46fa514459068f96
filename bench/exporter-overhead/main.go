// Command exporter-overhead (bench/exporter-overhead/run) measures what `etcdbench exporter` costs the
// etcd it watches: the same `etcdbench etcd put` load (cmp.PutLoad, at
// least 60,000 puts a run) against one etcd (an embedded etcd in a
// process of its own, bench/put-vs-etcd-benchmark/etcdserver) with no exporter and
// with the exporter attached and scraped every --scrape-every, in
// alternating order; it gives the median over rounds of the exporter
// run's throughput and p99 relative to the plain run of its round, the
// exporter's own CPU share (its process and its BPF programs' run time,
// as bench/trace-overhead measures the tracer) and its resident memory.
// With --capacity (the default) the exporter also serves the member's
// headroom: the bench measures its directory once with `etcdbench
// capacity --quick` before the rounds, gives the exporter that file and
// etcd's /metrics, and records the ratio it served after each load.
// Targets (issue 15): throughput ratio >= 0.97, CPU share < 1 %.
//
// It is a measurement, not a test: the exit status is 0 whatever the
// ratios, 1 when a tool failed to run, 2 for bad flags, 130 when
// interrupted. See bench/README.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/exporter/headroom"
)

const name = "exporter-overhead"

type options struct {
	cmp.Common
	cmp.PutLoad
	// ScrapeEvery is how often /metrics is read during the load, as a
	// Prometheus server would.
	ScrapeEvery time.Duration
	// Capacity gives the exporter a capacity file of the bench's
	// directory (--capacity), so that it also reads etcd's put count and
	// serves the member's headroom.
	Capacity bool
}

// params are what the JSON file records of the settings.
type params struct {
	cmp.PutLoad
	ScrapeEveryNs int64 `json:"scrape_every_ns"`
	Capacity      bool  `json:"capacity"`
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio = true
	o := options{Common: c, PutLoad: cmp.DefaultPutLoad(), ScrapeEvery: 5 * time.Second, Capacity: true}
	err = cmp.ParseFlags(name, "etcd put throughput with and without `etcdbench exporter` attached (and scraped), alternated.", &o.Common, args, stderr,
		func(fs *flag.FlagSet) {
			o.PutLoad.Register(fs)
			fs.DurationVar(&o.ScrapeEvery, "scrape-every", o.ScrapeEvery, "how often the exporter's /metrics is read during the load")
			fs.BoolVar(&o.Capacity, "capacity", o.Capacity, "measure the directory once with `etcdbench capacity --quick` and run the exporter with --capacity on that file and --etcd-metrics-url on etcd's, so that it serves the member's headroom (its put count read at every scan); false: the exporter without it")
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

// settle is the rest before every load: the exporter's time to attach,
// and as long for the run without it.
const settle = 2 * time.Second

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
	load0, err := cmp.LoadAverage()
	if err != nil {
		return err
	}
	started := time.Now().UTC()
	// The capacity file is measured before etcd starts: its sweep must not
	// share the disk with the etcd of the rounds.
	var capFile string
	var est headroom.Estimate
	if o.Capacity {
		var cleanup func()
		capFile, est, cleanup, err = measureCapacity(ctx, env.Etcdbench, env.Dir, stderr)
		if err != nil {
			return err
		}
		defer cleanup()
	}
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
	var shares, bpfs, rss, ratios []float64
	load := func(ctx context.Context, run string) (cmp.Measurement, json.RawMessage, error) {
		if run == runNone {
			// The same rest as the exporter's run gets while it attaches:
			// a load started right after the previous one finds etcd still
			// busy with it and runs slower, whichever side it is.
			select {
			case <-ctx.Done():
				return cmp.Measurement{}, nil, ctx.Err()
			case <-time.After(settle):
			}
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
		args := []string{"exporter", "--listen", addr, "--pid", pid}
		if capFile != "" {
			args = append(args, "--capacity", capFile, "--etcd-metrics-url", srv.URL+"/metrics")
		}
		detach, xpid, err := cmp.Attach(ctx, settle, env.Etcdbench, args...)
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
		var ratio, rate float64
		var rerr error
		if capFile != "" {
			ratio, rate, rerr = servedRatio(ctx, url)
		}
		_, derr := detach()
		if err := errors.Join(lerr, serr, cerr, aerr, merr, rerr, derr); err != nil {
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
		shares, bpfs = append(shares, proc+bpf), append(bpfs, bpf)
		rss = append(rss, float64(mem))
		if capFile != "" {
			m.Figures["capacity_used_ratio"], m.Figures["capacity_member_puts_per_second"] = ratio, rate
			ratios = append(ratios, ratio)
		}
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
	var table bytes.Buffer
	c.Table = &table
	out := cmp.JSONFile[params]{Started: started, Dir: env.Dir, Params: params{o.PutLoad, o.ScrapeEvery.Nanoseconds(), o.Capacity}, Etcdbench: env.Etcdbench}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)
	with := "exporter scraped every " + o.ScrapeEvery.String()
	if capFile != "" {
		with += fmt.Sprintf(", with --capacity (capacity --quick's estimate: %.0f puts/s)", est.PutsPerSecond)
	}
	fmt.Fprintf(stdout, "%s: %s, against one embedded etcd (pid %s, %s); %s; %d rounds\n\n", name, o.PutLoad, pid, srv.URL, with, o.Rounds)
	if err := c.Run(ctx, o.Rounds, stdout, stderr, &out.Runs, &out.Summary); err != nil {
		return err
	}
	if err := renderCost(io.MultiWriter(stdout, &table), shares, rss, ratios); err != nil {
		return err
	}
	figures := cmp.RowFigures(out.Summary)
	maps.Copy(figures, costFigures(shares, bpfs, rss, ratios))
	if capFile != "" {
		figures["capacity_puts_per_second"] = est.PutsPerSecond
	}
	res := cmp.Result{Bench: name, Source: "measured: " + strings.Join(append([]string{"bench/" + name + "/run"}, o.Args...), " "),
		Machine: cmp.Machine(env.Dir), Rounds: o.Rounds, Figures: figures, Table: table.String()}
	return cmp.SaveResult(o.Abs(o.Results), res, load0, started)
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

// renderCost gives the median over rounds of the exporter's CPU share,
// its resident memory at the end of each load and, with --capacity, the
// ratio it served.
func renderCost(w io.Writer, shares, rss, ratios []float64) error {
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
	if err != nil || len(ratios) == 0 {
		return err
	}
	_, err = fmt.Fprintf(w, "etcdbench_capacity_used_ratio served after each load (the last minute's puts over the estimate): median %.2f (range %.2f..%.2f)\n",
		cmp.Median(ratios), slices.Min(ratios), slices.Max(ratios))
	return err
}

// costFigures names renderCost's figures for the result file.
func costFigures(shares, bpfs, rss, ratios []float64) map[string]float64 {
	f := map[string]float64{}
	if len(shares) > 0 {
		f["exporter_cpu_share_pct"] = 100 * cmp.Median(shares)
		f["exporter_cpu_share_pct_min"] = 100 * slices.Min(shares)
		f["exporter_cpu_share_pct_max"] = 100 * slices.Max(shares)
		f["exporter_bpf_share_pct"] = 100 * cmp.Median(bpfs)
		f["exporter_rss_mib"] = cmp.Median(rss) / (1 << 20)
	}
	if len(ratios) > 0 {
		f["capacity_used_ratio"] = cmp.Median(ratios)
		f["capacity_used_ratio_min"] = slices.Min(ratios)
		f["capacity_used_ratio_max"] = slices.Max(ratios)
	}
	return f
}
