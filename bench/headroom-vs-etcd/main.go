// Command headroom-vs-etcd (bench/headroom-vs-etcd/run) checks the
// exporter's headroom against the truth: a real etcd 3.4 on a volume
// capped by the kernel's block throttle (a zoo storage on a RAM disk),
// measured by `etcdbench capacity --quick`, then driven by etcd's
// benchmark tool at shares of that estimate while `etcdbench exporter
// --capacity` watches it and a real Prometheus evaluates the
// near-capacity alert. Goals: the exporter's ratio within ±0.1 of the
// share driven (benchmark's achieved rate over the estimate), the alert
// firing at 90 % and not at 50 %.
//
// It is a measurement, not a test: the exit status is 0 whatever the
// figures, 1 when a tool failed to run, 2 for bad flags, 130 when
// interrupted. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/exporter/headroom"
	"etcdbench/internal/testutil/zoo"
)

const name = "headroom-vs-etcd"

// Goals, as data with their source.
const (
	ratioGoal  = 0.1
	alertAbove = 0.8
	goalSource = "issue 34: the exporter's ratio within ±0.1 of the true share; the near-capacity alert firing at 90 % and not at 50 %"
)

type options struct {
	cmp.Common
	Storage    string
	RAMDisk    int64
	Shares     []float64
	Level      time.Duration // each share's load
	ReadAfter  time.Duration // when the exporter's ratio is read, into the level
	AlertFor   time.Duration // the bench's copy of the near-capacity alert's `for`
	Debian     string
	Benchmark  string
	Rules      string
	Prometheus string
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds = true, cmp.MinRounds
	o := options{Common: c, Storage: "iops-1000", RAMDisk: 2 << 30, Level: 95 * time.Second, ReadAfter: 75 * time.Second,
		AlertFor: 15 * time.Second, Debian: "/usr/bin/etcd", Rules: "deploy/prometheus/etcdbench-rules.yaml", Prometheus: "prometheus"}
	shares := "0.25,0.5,0.9"
	err = cmp.ParseFlags(name, "the exporter's capacity ratio and near-capacity alert against a real etcd driven at shares of capacity's estimate.", &o.Common, args, stderr,
		func(fs *flag.FlagSet) {
			fs.StringVar(&o.Storage, "storage", o.Storage, "the zoo storage the etcd runs on (a block-throttle cap)")
			fs.Int64Var(&o.RAMDisk, "ramdisk", o.RAMDisk, "make the storage on an ext4 RAM disk of this many bytes (0: on --dir's disk)")
			fs.StringVar(&shares, "shares", shares, "the shares of the estimate to drive, comma-separated, ascending")
			fs.DurationVar(&o.Level, "level", o.Level, "how long each share is driven")
			fs.DurationVar(&o.ReadAfter, "read-after", o.ReadAfter, "when, into a level, the exporter's ratio is read (its window is the minute before)")
			fs.DurationVar(&o.AlertFor, "alert-for", o.AlertFor, "the `for` of the bench's copy of EtcdbenchNearCapacity (10m in deploy/prometheus)")
			fs.StringVar(&o.Debian, "debian-etcd", o.Debian, "the etcd 3.4 binary")
			fs.StringVar(&o.Benchmark, "benchmark", o.Benchmark, "etcd's benchmark tool; default: built as bench/internal/cmp builds it")
			fs.StringVar(&o.Rules, "rules", o.Rules, "the rule file the alert is copied from")
			fs.StringVar(&o.Prometheus, "prometheus", o.Prometheus, "the prometheus binary")
		})
	if err != nil {
		return o, err
	}
	for _, s := range strings.Split(shares, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || v <= 0 || v > 2 || (len(o.Shares) > 0 && v <= o.Shares[len(o.Shares)-1]) {
			return o, cmp.UsageError{Err: fmt.Errorf("--shares %q: want ascending shares in (0, 2]", shares)}
		}
		o.Shares = append(o.Shares, v)
	}
	if o.ReadAfter < time.Minute+5*time.Second || o.ReadAfter >= o.Level {
		return o, cmp.UsageError{Err: fmt.Errorf("--read-after %v: want over the exporter's minute and under --level %v", o.ReadAfter, o.Level)}
	}
	if o.RAMDisk > 0 && o.Dir != "" {
		return o, cmp.UsageError{Err: errors.New("--ramdisk and --dir: choose one")}
	}
	return o, nil
}

// level is what one share of one round gave.
type level struct {
	Share    float64 `json:"share"`    // offered / estimate
	Offered  float64 `json:"offered"`  // puts/s
	Achieved float64 `json:"achieved"` // benchmark's puts/s
	// TrueShare is Achieved over the estimate; Ratio the exporter's
	// etcdbench_capacity_used_ratio at ReadAfter; PutRate its rate.
	TrueShare float64 `json:"true_share"`
	Ratio     float64 `json:"ratio"`
	PutRate   float64 `json:"put_rate"`
	// Firing says EtcdbenchNearCapacity was firing at the level's end.
	Firing bool   `json:"firing"`
	Load   string `json:"load"`
}

// round is one measurement of the estimate and its levels.
type round struct {
	N        int     `json:"round"`
	Estimate float64 `json:"estimate"`
	Volume   float64 `json:"volume_write_iops"`
	Load     string  `json:"load"`
	Levels   []level `json:"levels"`
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	stores, err := zoo.Lookup(zoo.Default(), o.Storage)
	if err != nil || len(stores) != 1 {
		return cmp.UsageError{Err: fmt.Errorf("--storage %s: %v", o.Storage, err)}
	}
	startLoad, _ := cmp.LoadAverage()
	began := time.Now()
	if o.RAMDisk > 0 {
		rd, err := zoo.NewRAMDisk(ctx, o.RAMDisk)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, rd.Close()) }()
		o.Dir = rd.Dir
	}
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	bin, err := os.MkdirTemp("", name+"-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	bench := o.Abs(o.Benchmark)
	if bench == "" {
		if bench, _, err = cmp.BuildBenchmark(ctx, cmp.DefaultBenchmarkVersions, bin, stderr); err != nil {
			return err
		}
	}
	rules, err := alertRules(o.Abs(o.Rules), o.AlertFor)
	if err != nil {
		return err
	}
	var rounds []round
	for n := 1; n <= o.Rounds; n++ {
		r, err := measureRound(ctx, o, env, stores[0], bench, rules, n, stderr)
		rounds = append(rounds, r)
		if err != nil {
			return fmt.Errorf("round %d: %w", n, err)
		}
	}
	table, figs := render(rounds)
	fmt.Fprint(stdout, table)
	if o.JSON != "" {
		if err := cmp.WriteJSON(o.Abs(o.JSON), rounds); err != nil {
			return err
		}
	}
	return cmp.SaveResult(o.Abs(o.Results), cmp.Result{Bench: name, Source: "bench/headroom-vs-etcd/run " + strings.Join(o.Args, " "),
		Machine: cmp.Machine(env.Dir), Rounds: o.Rounds, Figures: figs, Table: table}, startLoad, began)
}

// render is the table of every round's levels and the figures it quotes.
func render(rounds []round) (string, map[string]float64) {
	var b strings.Builder
	fmt.Fprintf(&b, "| round | estimate (puts/s) | share offered | puts/s achieved | true share | exporter's ratio | difference | near-capacity alert | load |\n|---|---|---|---|---|---|---|---|---|\n")
	worst, fired90, fired50 := 0.0, 0.0, 0.0
	n90, n50 := 0.0, 0.0
	for _, r := range rounds {
		for _, l := range r.Levels {
			d := l.Ratio - l.TrueShare
			worst = math.Max(worst, math.Abs(d))
			fmt.Fprintf(&b, "| %d | %.0f | %.2f | %.1f | %.3f | %.3f | %+.3f | %s | %s |\n", r.N, r.Estimate, l.Share, l.Achieved, l.TrueShare, l.Ratio, d, firing(l.Firing), l.Load)
			switch {
			case l.Share > alertAbove:
				n90++
				if l.Firing {
					fired90++
				}
			case l.Share <= alertAbove-2*ratioGoal:
				n50++
				if l.Firing {
					fired50++
				}
			}
		}
	}
	fmt.Fprintf(&b, "\nworst |ratio - true share| %.3f (goal <= %.1f: %s); the alert fired at %g of %g levels offered above 0.8 of the estimate and at %g of %g offered at 0.6 or below (%s)\n",
		worst, ratioGoal, cmp.YesNo(worst <= ratioGoal), fired90, n90, fired50, n50, goalSource)
	return b.String(), map[string]float64{"worst_ratio_difference": worst, "alert_fired_high": fired90, "levels_high": n90, "alert_fired_low": fired50, "levels_low": n50}
}

func firing(b bool) string {
	if b {
		return "firing"
	}
	return "-"
}

// scrapeValue reads one series' value from a /metrics URL.
func scrapeValue(ctx context.Context, url, metric string) (float64, error) {
	f, err := metrics.Scrape(ctx, nil, url)
	if err != nil {
		return 0, err
	}
	return metrics.ValueOf(f, metric)
}

// parseEstimate is capacity's estimate in a saved result.
func parseEstimate(b []byte) (headroom.Estimate, error) {
	j, err := cmp.FirstJSON(b)
	if err != nil {
		return headroom.Estimate{}, err
	}
	return headroom.Parse(j)
}

// writeFile writes b to dir/name.
func writeFile(dir, name string, b []byte) (string, error) {
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, b, 0o644)
}
