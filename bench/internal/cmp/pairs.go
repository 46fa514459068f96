package cmp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// Tool names, as tables and the JSON file show them.
const (
	ToolFio       = "fio"
	ToolEtcdbench = "etcdbench"
)

// Baseline is a prepare-only run: the same command with (almost) no I/O,
// which costs the tool's start-up and its file preparation. Subtracting
// it leaves the CPU time of the I/O itself.
type Baseline struct {
	Ops   int64         `json:"ops"`
	Bytes int64         `json:"bytes"`
	CPU   time.Duration `json:"cpu_ns"`
	Wall  time.Duration `json:"wall_ns"`
}

// Measurement is one run of one tool in a paired comparison.
type Measurement struct {
	Run      string        `json:"run"`  // e.g. "fio libaio"; what pairs refer to
	Tool     string        `json:"tool"` // ToolFio or ToolEtcdbench
	Round    int           `json:"round"`
	Position int           `json:"position"` // 1: ran first in its round
	Ops      int64         `json:"ops"`
	Bytes    int64         `json:"bytes"`
	Runtime  time.Duration `json:"runtime_ns"` // the tool's own timed part
	Wall     time.Duration `json:"wall_ns"`    // fork to exit
	CPU      time.Duration `json:"cpu_ns"`     // user+sys from the child's rusage
	User     time.Duration `json:"user_ns"`
	Sys      time.Duration `json:"sys_ns"`
	// SelfCPU is the CPU etcdbench reports for its own timed part
	// (workload "process": getrusage of the whole process around the
	// timed part); 0 for fio.
	SelfCPU time.Duration `json:"self_cpu_ns,omitempty"`
	Base    *Baseline     `json:"baseline,omitempty"`
	// Figures are the tool's own results by name (e.g. "iops",
	// "bandwidth", "read_p99_ns").
	Figures map[string]float64 `json:"figures"`
}

// FromChild fills the time and CPU fields from a finished child.
func (m *Measurement) FromChild(c Child) {
	m.Wall, m.CPU, m.User, m.Sys = c.Wall, c.CPU, c.User, c.Sys
}

// NetCPU is the CPU time of the run less that of its baseline.
func (m Measurement) NetCPU() time.Duration {
	if m.Base == nil {
		return m.CPU
	}
	return m.CPU - m.Base.CPU
}

// NetOps is the run's I/Os less its baseline's.
func (m Measurement) NetOps() int64 {
	if m.Base == nil {
		return m.Ops
	}
	return m.Ops - m.Base.Ops
}

// NetBytes is the run's bytes less its baseline's.
func (m Measurement) NetBytes() int64 {
	if m.Base == nil {
		return m.Bytes
	}
	return m.Bytes - m.Base.Bytes
}

// IOCPU is the CPU time the run's I/O cost, with the I/Os and bytes it
// covers: etcdbench's own figure for its timed part (SelfCPU) when it
// reported one, else the child's CPU less its prepare-only run's.
//
// etcdbench is not measured like fio, as child CPU less a prepare-only
// run, because it writes its test file inside the child and that write's
// CPU time varies by up to a second from one run to the next (cold or
// warm guest memory, how much write-back the process does itself in
// fdatasync): a prepare-only run that happened to be cold made
// etcdbench's net CPU 10-20 % too low in bench/mixed-vs-fio. fio's file
// is laid out by this program, so fio's prepare-only run costs only its
// start-up, which is stable.
func (m Measurement) IOCPU() (cpu time.Duration, ops, bytes int64) {
	if m.SelfCPU > 0 {
		return m.SelfCPU, m.Ops, m.Bytes
	}
	return m.NetCPU(), m.NetOps(), m.NetBytes()
}

// CPUPerOp is IOCPU per I/O, 0 when there is nothing to divide.
func (m Measurement) CPUPerOp() time.Duration {
	cpu, ops, _ := m.IOCPU()
	if ops > 0 && cpu > 0 {
		return cpu / time.Duration(ops)
	}
	return 0
}

// Step is one run of a round.
type Step struct {
	Run string // the Measurement's Run
	Do  func(ctx context.Context) (Measurement, json.RawMessage, error)
}

// Alternate returns steps in their order in odd rounds and reversed in
// even rounds, so that whatever state a run leaves for the next (a warm
// journal, device cache, CPU frequency) favours neither tool overall and
// each pair of neighbours runs in both orders.
func Alternate[T any](round int, steps []T) []T {
	out := slices.Clone(steps)
	if round%2 == 0 {
		slices.Reverse(out)
	}
	return out
}

// RawRun is one run in the --json file: the figures and the tool's report.
type RawRun struct {
	Measurement
	Report json.RawMessage `json:"report,omitempty"`
}

// Round is what one round measured, by run name, and in which order.
type Round struct {
	N     int                    `json:"round"`
	Order []string               `json:"order"`
	Runs  map[string]Measurement `json:"-"`
}

// RunRound runs steps in the order Alternate gives for round n of total,
// logging each to stderr.
func RunRound(ctx context.Context, n, total int, steps []Step, stderr io.Writer) (Round, []RawRun, error) {
	rd := Round{N: n, Runs: map[string]Measurement{}}
	var raws []RawRun
	for i, s := range Alternate(n, steps) {
		fmt.Fprintf(stderr, "round %d/%d: %s ...\n", n, total, s.Run)
		m, raw, err := s.Do(ctx)
		if err != nil {
			return rd, raws, fmt.Errorf("%s: %w", s.Run, err)
		}
		m.Run, m.Round, m.Position = s.Run, n, i+1
		rd.Runs[s.Run] = m
		rd.Order = append(rd.Order, s.Run)
		raws = append(raws, RawRun{Measurement: m, Report: raw})
	}
	return rd, raws, nil
}

// Pair names two runs of a round that are compared.
type Pair struct {
	Name string // e.g. "io_uring vs fio libaio"
	Etcd string // run names
	Fio  string
	// Informational pairs are shown without the metrics' targets.
	Informational bool
}

// Metric is one figure compared in every pair.
type Metric struct {
	Name   string
	Unit   string
	Value  func(Measurement) float64 // NaN when the run lacks it
	Target *Target                   // nil: informational
}

// Ratios returns the ratio etcdbench/fio of every metric for pair p in
// round r.
func Ratios(r Round, p Pair, ms []Metric) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = Ratio(m.Value(r.Runs[p.Etcd]), m.Value(r.Runs[p.Fio]))
	}
	return out
}

// SummarizePairs gives one Row per pair and metric: medians over rounds of
// either tool's figure and of the per-round ratios.
func SummarizePairs(rs []Round, pairs []Pair, ms []Metric) []Row {
	var rows []Row
	for _, p := range pairs {
		for i, m := range ms {
			var fio, etcd, ratios []float64
			for _, r := range rs {
				f, okf := r.Runs[p.Fio]
				e, oke := r.Runs[p.Etcd]
				if !okf || !oke {
					continue
				}
				fio, etcd = append(fio, m.Value(f)), append(etcd, m.Value(e))
				ratios = append(ratios, Ratios(r, p, ms)[i])
			}
			target := m.Target
			if p.Informational {
				target = nil
			}
			row := NewRow(m.Name, m.Unit, fio, etcd, ratios, target)
			row.Pair = p.Name
			rows = append(rows, row)
		}
	}
	return rows
}

// Comparison is a paired comparison: the runs of a round, the pairs of
// them that are compared, the metrics each pair compares, the columns of a
// round's table, and where the metrics' targets come from.
type Comparison struct {
	Steps        []Step
	Pairs        []Pair
	Metrics      []Metric
	Columns      []Column
	TargetSource string
	// Labels name the two sides in the tables; zero: etcdbench and fio.
	Labels Labels
	// Table, when set, also receives the summary table (a result file's
	// Table, SaveResult).
	Table io.Writer
}

// Run runs total rounds (RunRound), printing each round's table to stdout
// (RenderRound), then the summary (SummarizePairs, RenderSummary) and its
// footer (RenderFooter), the summary also to c.Table. Every run is appended to *runs and the summary
// stored in *summary as soon as they are known, so that a --json file
// holds them also when a later step fails.
func (c Comparison) Run(ctx context.Context, total int, stdout, stderr io.Writer, runs *[]RawRun, summary *[]Row) error {
	var rounds []Round
	for n := 1; n <= total; n++ {
		rd, raws, err := RunRound(ctx, n, total, c.Steps, stderr)
		*runs = append(*runs, raws...)
		if err != nil {
			return fmt.Errorf("round %d: %w", n, err)
		}
		rounds = append(rounds, rd)
		if err := RenderRoundLabeled(stdout, rd, total, c.Columns, c.Pairs, c.Metrics, c.Labels); err != nil {
			return err
		}
	}
	*summary = SummarizePairs(rounds, c.Pairs, c.Metrics)
	w := stdout
	if c.Table != nil {
		w = io.MultiWriter(stdout, c.Table)
	}
	if err := RenderSummaryLabeled(w, len(rounds), *summary, nil, c.Labels); err != nil {
		return err
	}
	return RenderFooter(stdout, *summary, c.TargetSource)
}

// Figure returns the function that reads the named figure of a
// Measurement, NaN when it has none: the Value of a Metric or Column.
func Figure(name string) func(Measurement) float64 {
	return func(m Measurement) float64 {
		if v, ok := m.Figures[name]; ok {
			return v
		}
		return math.NaN()
	}
}
