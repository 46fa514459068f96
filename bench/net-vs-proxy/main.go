// Command net-vs-proxy (bench/net-vs-proxy/run) compares the round trip
// `etcdbench net` measures with the one an independent delay proxy
// makes: Shopify's toxiproxy, built from its Go module, between `etcdbench
// net --peers` and `etcdbench net --listen` on 127.0.0.1, with a latency
// toxic of half the round trip each way, at each round trip of --rtts,
// over several rounds in alternating order. The proxy alone (0) is the
// floor, subtracted from nothing: the goal is the measured p50 within
// 10 % or 1 ms of the round trip the proxy adds plus the floor's.
//
// It is a measurement, not a test: the exit status is 0 whatever the
// ratios, 1 when a tool failed to run, 2 for bad flags, 130 when
// interrupted. See bench/README.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/units"
)

const name = "net-vs-proxy"

type options struct {
	cmp.Common
	RTTs []time.Duration
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds, c.FewestRounds = true, 3, 1
	o := options{Common: c}
	rtts := "0,2ms,10ms,50ms,120ms"
	err = cmp.ParseFlags(name, "Compares the round trip `etcdbench net` measures with toxiproxy's latency between two local etcdbench net processes.", &o.Common, args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&rtts, "rtts", rtts, "round trips the proxy adds, a list")
	})
	if err != nil {
		return o, err
	}
	o.RTTs, err = cmp.ParseDurations("rtts", rtts)
	return o, err
}

// row is one round trip's measurement in one round.
type row struct {
	Round   int           `json:"round"`
	Added   time.Duration `json:"added_rtt_ns"`
	P50     time.Duration `json:"p50_ns"`
	P99     time.Duration `json:"p99_ns"`
	Seconds float64       `json:"seconds"`
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	bin, err := os.MkdirTemp("", name+"-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	eb := o.Etcdbench
	if eb == "" {
		fmt.Fprintln(stderr, "building etcdbench ...")
		if eb, err = cmp.BuildEtcdbench(ctx, o.ModuleDir, bin); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "building toxiproxy (%s) ...\n", cmp.ToxiproxyPkg)
	server, err := cmp.BuildToxiproxy(ctx, bin)
	if err != nil {
		return err
	}
	listen, err := cmp.FreeAddr()
	if err != nil {
		return err
	}
	upstream, err := cmp.FreeAddr()
	if err != nil {
		return err
	}
	tp, err := cmp.StartToxiproxy(ctx, server)
	if err != nil {
		return err
	}
	defer tp.Stop()
	ln := exec.CommandContext(ctx, eb, "net", "--listen", upstream, "--token", "bench", "--for", "1h")
	ln.Stdout, ln.Stderr = io.Discard, io.Discard
	if err := ln.Start(); err != nil {
		return err
	}
	defer func() { _ = ln.Process.Signal(os.Interrupt); _ = ln.Wait() }()
	if err := cmp.WaitListening(ctx, upstream); err != nil {
		return fmt.Errorf("etcdbench net --listen: %w", err)
	}
	if err := tp.AddProxy(ctx, "net", listen, upstream); err != nil {
		return err
	}
	var rows []row
	for r := 1; r <= o.Rounds; r++ {
		order := slices.Clone(o.RTTs)
		if r%2 == 0 {
			slices.Reverse(order)
		}
		for _, rtt := range order {
			if err := tp.SetLatency(ctx, "net", rtt); err != nil {
				return err
			}
			start := time.Now()
			ch, err := cmp.RunChild(ctx, []int{0, 1}, eb, "net", "--peers", listen, "--token", "bench", "--stream-for", "1s", "-o", "json")
			if err != nil {
				return err
			}
			w, err := cmp.EtcdbenchWorkload(ch.Stdout, "net")
			if err != nil {
				return err
			}
			x := row{Round: r, Added: rtt, Seconds: time.Since(start).Seconds()}
			for _, f := range w.Figures {
				switch f.Name {
				case "rtt_p50":
					x.P50 = units.FromSeconds(f.Value)
				case "rtt_p99":
					x.P99 = units.FromSeconds(f.Value)
				}
			}
			fmt.Fprintf(stderr, "  round %d, proxy adds %v: p50 %v, p99 %v (%.1f s)\n", r, rtt, x.P50, x.P99, x.Seconds)
			rows = append(rows, x)
		}
	}
	report(stdout, o.RTTs, rows)
	if o.JSON != "" {
		b, _ := json.MarshalIndent(map[string]any{"bench": name, "proxy": cmp.ToxiproxyPkg, "rounds": o.Rounds, "rows": rows}, "", "  ")
		return os.WriteFile(o.Abs(o.JSON), append(b, '\n'), 0o644)
	}
	return nil
}

// report prints, per added round trip, the median p50 measured over
// the rounds, what it should be (the added round trip plus the proxy's
// own, the median p50 at 0), their ratio and difference, and whether it
// meets the goal.
func report(w io.Writer, rtts []time.Duration, rows []row) {
	median := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	at := func(rtt time.Duration) (p50s []time.Duration) {
		for _, r := range rows {
			if r.Added == rtt {
				p50s = append(p50s, r.P50)
			}
		}
		return p50s
	}
	floor := time.Duration(0)
	if f := at(0); len(f) > 0 {
		floor = median(f)
	}
	fmt.Fprintf(w, "%s: the proxy alone, p50 %v (median of %d rounds)\n", name, floor, len(at(0)))
	fmt.Fprintf(w, "| proxy adds | want (added + proxy's own) | measured p50, median (range) | ratio | difference | within 10 %% or 1 ms |\n|---|---|---|---|---|---|\n")
	for _, rtt := range rtts {
		p50s := at(rtt)
		if len(p50s) == 0 || rtt == 0 {
			continue
		}
		want, got := rtt+floor, median(p50s)
		diff := got - want
		ok := diff.Abs() <= max(time.Millisecond, want/10)
		fmt.Fprintf(w, "| %v | %v | %v (%v-%v) | %.3f | %v | %v |\n", rtt, want, got.Round(10*time.Microsecond),
			slices.Min(p50s).Round(10*time.Microsecond), slices.Max(p50s).Round(10*time.Microsecond), float64(got)/float64(want), diff.Round(10*time.Microsecond), ok)
	}
}
