// Command put-vs-etcd-benchmark (bench/put-vs-etcd-benchmark/run) compares `etcdbench etcd put` and `etcd range` with
// etcd's official benchmark tool (go.etcd.io/etcd/v3/tools/benchmark,
// `benchmark put` and `benchmark range`) against one etcd both share: an embedded etcd started as a separate
// process (./etcdserver) on free 127.0.0.1 ports with its data in the
// test directory. Each round runs both tools with the same --conns,
// --clients, --total, --key-size and --val-size, at a small and a large
// configuration, in alternating order, and the summary gives the medians
// of the per-round ratios etcdbench/benchmark of throughput (target >=
// 1.0) and p99 latency (target 0.90..1.10); p50 is informational.
//
// It is a measurement, not a test: the exit status is 0 whatever the
// ratios, 1 when a tool failed to run or could not be built, 2 for bad
// flags, 130 when interrupted. See bench/README.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"etcdbench/bench/internal/cmp"
)

const name = "put-vs-etcd-benchmark"

// config is one load both tools run.
type config struct {
	Conns   int   `json:"conns"`
	Clients int   `json:"clients"`
	Total   int64 `json:"total"`
}

func (c config) String() string { return fmt.Sprintf("%d/%d", c.Conns, c.Clients) }

// params are passed to both tools.
type params struct {
	Configs []config `json:"configs"`
	// Ops are the requests compared: put, range or both.
	Ops     []string `json:"ops"`
	KeySize int      `json:"key_size"`
	ValSize int      `json:"val_size"`
	// MatchKeyBytes gives benchmark keys as long as etcdbench's, whose
	// --key-size bytes follow its /etcdbench/<run-id>/ prefix.
	MatchKeyBytes bool `json:"match_key_bytes"`
}

// options are the parsed flags.
type options struct {
	cmp.Common
	params
	Benchmark         string   // "" builds etcd's benchmark tool
	BenchmarkVersions []string // tried in order when building it
}

func main() { cmp.Main(name, parseFlags, run) }

// defaultVersions are cmp.DefaultBenchmarkVersions, as a flag's value.
var defaultVersions = strings.Join(cmp.DefaultBenchmarkVersions, ",")

// parseFlags turns the command line into options.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	o := options{Common: c, params: params{KeySize: 8, ValSize: 256, MatchKeyBytes: true}}
	ops := "put,range"
	small := config{Conns: 1, Clients: 1, Total: 2000}
	large := config{Conns: 100, Clients: 1000, Total: 20000}
	versions := defaultVersions
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Dir, "dir", o.Dir, "directory for the etcd's data; default: a new temporary directory under the current one, removed at the end")
	fs.IntVar(&o.Rounds, "rounds", o.Rounds, fmt.Sprintf("rounds, each running both tools at both configurations (at least %d)", cmp.MinRounds))
	fs.StringVar(&o.Etcdbench, "etcdbench", o.Etcdbench, "etcdbench binary; default: go build ./cmd/etcdbench into a temporary directory")
	fs.StringVar(&o.JSON, "json", o.JSON, "write every run's figures, the tools' raw reports and the summary to this file")
	fs.StringVar(&o.Results, "results", o.Results, "also write the summary's figures and table, the rounds and the machine's load average, as DIR/<date>.json (commit it in bench/put-vs-etcd-benchmark/results: README.md and bench/README.md quote it)")
	fs.StringVar(&o.Benchmark, "benchmark", "", "etcd's benchmark binary; default: build go.etcd.io/etcd/v3/tools/benchmark into a temporary directory")
	fs.StringVar(&versions, "benchmark-versions", versions, "etcd versions to try, in order, when building benchmark")
	fs.IntVar(&small.Conns, "small-conns", small.Conns, "gRPC connections of the small configuration")
	fs.IntVar(&small.Clients, "small-clients", small.Clients, "clients of the small configuration")
	fs.Int64Var(&small.Total, "small-total", small.Total, "requests of the small configuration")
	fs.IntVar(&large.Conns, "large-conns", large.Conns, "gRPC connections of the large configuration")
	fs.IntVar(&large.Clients, "large-clients", large.Clients, "clients of the large configuration")
	fs.Int64Var(&large.Total, "large-total", large.Total, "requests of the large configuration")
	fs.IntVar(&o.KeySize, "key-size", o.KeySize, "key bytes, for both tools (etcdbench's key also has its /etcdbench/<run-id>/ prefix)")
	fs.IntVar(&o.ValSize, "val-size", o.ValSize, "value bytes, for both tools")
	fs.BoolVar(&o.MatchKeyBytes, "match-key-bytes", o.MatchKeyBytes, "give benchmark keys as long as etcdbench's (its prefix and --key-size); false: benchmark gets --key-size alone")
	fs.StringVar(&ops, "ops", ops, "requests to compare: put, range or put,range")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bench/%s [flags]\n\n%s\n\nFlags:\n", name,
			"Compares `etcdbench etcd put|range` with etcd's `benchmark put|range` against one etcd both share.")
		fs.PrintDefaults()
	}
	if err := cmp.Parse(fs, args); err != nil {
		return o, err
	}
	o.Args = args
	if err := o.Common.Check(); err != nil {
		return o, err
	}
	for _, v := range strings.Split(versions, ",") {
		if v = strings.TrimSpace(v); v != "" {
			o.BenchmarkVersions = append(o.BenchmarkVersions, v)
		}
	}
	if o.Benchmark == "" && len(o.BenchmarkVersions) == 0 {
		return o, cmp.UsageError{Err: errors.New("--benchmark-versions names no version")}
	}
	for _, op := range strings.Split(ops, ",") {
		if op = strings.TrimSpace(op); op != "" {
			o.Ops = append(o.Ops, op)
		}
	}
	o.Configs = []config{small, large}
	return o, o.params.check()
}

// check rejects parameters that cannot be passed to both tools.
func (p params) check() error {
	bad := func(format string, a ...any) error { return cmp.UsageError{Err: fmt.Errorf(format, a...)} }
	for _, c := range p.Configs {
		switch {
		case c.Conns < 1 || c.Clients < 1 || c.Total < 1:
			return bad("configuration %s, --total %d: conns, clients and total must be at least 1", c, c.Total)
		case c.Clients < c.Conns:
			return bad("configuration %s: fewer clients than connections", c)
		}
	}
	if p.Configs[0] == p.Configs[1] {
		return bad("the small and large configurations are the same (%s)", p.Configs[0])
	}
	if len(p.Ops) == 0 {
		return bad("--ops names no request: want put, range or put,range")
	}
	for _, op := range p.Ops {
		if op != "put" && op != "range" {
			return bad("--ops %q: want put or range", op)
		}
	}
	if p.KeySize < 1 || p.ValSize < 0 {
		return bad("--key-size %d, --val-size %d: want a key of at least 1 byte", p.KeySize, p.ValSize)
	}
	return nil
}
