// Command command-time (bench/command-time/run) measures how long
// etcdbench's longest default commands take on this machine, against the
// times issue 14 holds them to: `etcdbench capacity` at most 2 minutes,
// `etcdbench etcd capacity` at most 3, and the default check (`etcdbench`
// with no command, which states capacity's estimate at its budget) at most
// 80 s. It builds etcdbench once, then each round runs the three
// commands on one directory, in an order that rotates from round to round,
// and records each one's wall time (fork to exit) and the answer it gave:
// the capacity rate, etcd's capacity rate, check's result and exit code.
// The summary gives each command's median wall time with its range, and
// whether the median is within its limit, and how check's answer compares
// with capacity's in the same round.
//
// It is a measurement, not a test: exit 0 whatever the times, 1 when a
// command failed to run (an exit code other than 0, or 1 for a FAIL
// verdict), 2 for bad flags, 130 when interrupted.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
)

const name = "command-time"

type options struct {
	cmp.Common
	// Commands are the commands to time, by name (all by default).
	Commands string
	// From are earlier --json files to summarize instead of measuring.
	From string
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds = true, 3
	o := options{Common: c}
	var names []string
	for _, c := range commands() {
		names = append(names, c.Name)
	}
	o.Commands = strings.Join(names, ",")
	err = cmp.ParseFlags(name, "How long `etcdbench capacity`, `etcdbench etcd capacity`, the default check and check --quick take on this machine, against issue 14's limits.", &o.Common, args, stderr,
		func(fs *flag.FlagSet) {
			fs.StringVar(&o.Commands, "commands", o.Commands, "the commands to time, comma-separated, in round 1's order (the checks are compared with capacity when it runs)")
			fs.StringVar(&o.From, "from", "", "measure nothing: summarize earlier --json files (comma-separated; their rounds numbered on) and, with --results, save the summary")
		})
	if err != nil {
		return o, err
	}
	if _, err := pick(o.Commands); err != nil {
		return o, cmp.UsageError{Err: err}
	}
	return o, nil
}

// pick returns the commands named in list, in its order.
func pick(list string) ([]command, error) {
	var out []command
	for _, n := range strings.Split(list, ",") {
		i := slices.IndexFunc(commands(), func(c command) bool { return c.Name == strings.TrimSpace(n) })
		if i < 0 {
			return nil, fmt.Errorf("--commands: unknown command %q", n)
		}
		out = append(out, commands()[i])
	}
	return out, nil
}

// command is one timed command: its arguments after the binary (--dir and
// the output flags are added), the wall time its median is held to, and
// where that limit comes from.
type command struct {
	Name   string        `json:"name"`
	Args   []string      `json:"args"`
	Limit  time.Duration `json:"limit_ns"`
	Source string        `json:"source"`
}

// commands are the timed commands, in round 1's order, with their limits.
func commands() []command {
	return []command{
		{Name: "capacity", Args: []string{"capacity"}, Limit: 2 * time.Minute,
			Source: "issue 14: `etcdbench capacity` on this machine's disk in at most 2 minutes"},
		{Name: "etcd capacity", Args: []string{"etcd", "capacity"}, Limit: 3 * time.Minute,
			Source: "issue 14: `etcd capacity` in at most 3"},
		{Name: "check", Args: nil, Limit: 80 * time.Second,
			Source: "issue 32: the default check, which now states capacity's estimate, in at most 80 s"},
		{Name: "check --quick", Args: []string{"--quick"}, Limit: 45 * time.Second,
			Source: "issue 42: check --quick, which states capacity's estimate from its etcd side alone, its answer's step judged over ten seconds (about 40 s)"},
	}
}

// argv is c's command line on dir: JSON on stdout, no progress on stderr.
func (c command) argv(dir string) []string {
	return append(slices.Clone(c.Args), "--dir", dir, "--no-progress", "-o", "json")
}

// timed is one run of one command.
type timed struct {
	Command  string        `json:"command"`
	Round    int           `json:"round"`
	Position int           `json:"position"` // 1: ran first in its round
	Wall     time.Duration `json:"wall_ns"`  // fork to exit
	CPU      time.Duration `json:"cpu_ns"`   // user+sys from its rusage (its etcd members' included)
	ExitCode int           `json:"exit_code"`
	answer
	Report json.RawMessage `json:"report,omitempty"`
}

// jsonFile is the layout of the --json file.
type jsonFile struct {
	Started   time.Time    `json:"started_at"`
	Dir       string       `json:"dir"`
	Etcdbench string       `json:"etcdbench"`
	Commands  []command    `json:"commands"`
	Runs      []timed      `json:"runs"`
	Summary   []summaryRow `json:"summary,omitempty"`
	Agreement agreement    `json:"agreement"`
	// QuickAgreement is check --quick's answer against capacity's.
	QuickAgreement agreement `json:"quick_agreement"`
	Error          string    `json:"error,omitempty"`
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	if o.From != "" {
		return fromFiles(o, stdout)
	}
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	cmds, err := pick(o.Commands)
	if err != nil {
		return err
	}
	out := jsonFile{Started: time.Now().UTC(), Dir: env.Dir, Etcdbench: env.Etcdbench, Commands: cmds}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)
	load0, err := cmp.LoadAverage()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: wall time of %s, %d rounds, on %s\n\n", name, o.Commands, o.Rounds, env.Dir)
	for n := 1; n <= o.Rounds; n++ {
		var round []timed
		for i, c := range rotate(n, cmds) {
			fmt.Fprintf(stderr, "round %d/%d: %s ...\n", n, o.Rounds, c.Name)
			t, err := runOne(ctx, env.Etcdbench, env.Dir, c)
			if err != nil {
				return fmt.Errorf("round %d: %s: %w", n, c.Name, err)
			}
			t.Round, t.Position = n, i+1
			round = append(round, t)
			out.Runs = append(out.Runs, t)
		}
		if err := renderRound(stdout, n, o.Rounds, round); err != nil {
			return err
		}
	}
	res, err := conclude(stdout, &out, cmds, o.Rounds)
	if err != nil {
		return err
	}
	res.Source, res.Machine = "measured: "+strings.Join(append([]string{"bench/" + name + "/run"}, o.Args...), " "), cmp.Machine(env.Dir)
	return cmp.SaveResult(o.Abs(o.Results), res, load0, out.Started)
}

// conclude summarizes out's runs of cmds over rounds into out, prints
// the summary and the agreements, and returns the result's figures and
// table (its source and machine are the caller's).
func conclude(stdout io.Writer, out *jsonFile, cmds []command, rounds int) (cmp.Result, error) {
	out.Summary = summarize(cmds, out.Runs)
	out.Agreement, out.QuickAgreement = agree(out.Runs, "check"), agree(out.Runs, "check --quick")
	var table bytes.Buffer
	if err := renderSummary(io.MultiWriter(stdout, &table), rounds, out.Summary); err != nil {
		return cmp.Result{}, err
	}
	figures := resultFigures(out.Summary)
	for _, a := range []agreement{out.Agreement, out.QuickAgreement} {
		if !slices.ContainsFunc(cmds, func(c command) bool { return c.Name == a.Command }) {
			continue
		}
		if err := renderAgreement(stdout, a); err != nil {
			return cmp.Result{}, err
		}
		if k := cmp.Slug(a.Command); a.Rounds > 0 {
			figures[k+"_to_capacity_median"], figures[k+"_to_capacity_min"], figures[k+"_to_capacity_max"] = a.Median, a.Min, a.Max
		}
	}
	return cmp.Result{Bench: name, Rounds: rounds, Figures: figures, Table: summaryTable(table.String())}, nil
}

// fromFiles summarizes earlier --json files (o.From) without measuring:
// their runs in one list, each file's rounds numbered after the last
// one's, the commands in the order they first appear; with --results the
// summary is saved as a measured run's is (the machine's and the load
// average's of now: the files do not keep them).
func fromFiles(o options, stdout io.Writer) error {
	var all jsonFile
	var cmds []command
	round := 0
	for i, f := range strings.Split(o.From, ",") {
		b, err := os.ReadFile(o.Abs(strings.TrimSpace(f)))
		if err != nil {
			return err
		}
		var jf jsonFile
		if err := json.Unmarshal(b, &jf); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if i == 0 {
			all.Started, all.Dir, all.Etcdbench = jf.Started, jf.Dir, jf.Etcdbench
		}
		for _, c := range jf.Commands {
			if !slices.ContainsFunc(cmds, func(k command) bool { return k.Name == c.Name }) {
				cmds = append(cmds, c)
			}
		}
		last := 0
		for _, t := range jf.Runs {
			t.Round += round
			last = max(last, t.Round)
			t.Report = nil
			all.Runs = append(all.Runs, t)
		}
		round = last
	}
	all.Commands = cmds
	fmt.Fprintf(stdout, "%s: %d rounds from %s\n\n", name, round, o.From)
	res, err := conclude(stdout, &all, cmds, round)
	if err != nil {
		return err
	}
	res.Source = "summarized: bench/" + name + "/run --from " + o.From
	res.Machine = cmp.Machine(all.Dir)
	load, err := cmp.LoadAverage()
	if err != nil {
		return err
	}
	return cmp.SaveResult(o.Abs(o.Results), res, load, all.Started)
}

// resultFigures are the figures the READMEs quote, per command (slugged):
// the median, min and max wall time in seconds, and the median answer.
func resultFigures(rows []summaryRow) map[string]float64 {
	f := map[string]float64{}
	for _, r := range rows {
		k := cmp.Slug(r.Command)
		f[k+"_wall_s"], f[k+"_wall_min_s"], f[k+"_wall_max_s"] = r.Median.Seconds(), r.Min.Seconds(), r.Max.Seconds()
		f[k+"_answer"] = r.RateMedian
	}
	return f
}

// summaryTable is the summary's table without its heading and notes.
func summaryTable(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	for _, l := range lines[1:] {
		if l == "" {
			break
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

// rotate returns cmds in round n's order: round 1 as given, each later
// round starting one command further, so that in as many rounds as there
// are commands each one runs once in each position (with three commands,
// reversing every other round would leave the middle one in the middle).
func rotate[T any](n int, cmds []T) []T {
	k := (n - 1) % len(cmds)
	return append(slices.Clone(cmds[k:]), cmds[:k]...)
}

// runOne runs c on dir and reads its answer. Exit 1 is a FAIL verdict: the
// report is complete and its time counts.
func runOne(ctx context.Context, bin, dir string, c command) (timed, error) {
	ch, err := cmp.RunChild(ctx, []int{1}, bin, c.argv(dir)...)
	if err != nil {
		return timed{}, err
	}
	a, err := parseAnswer(ch.Stdout)
	if err != nil {
		return timed{}, fmt.Errorf("%w%s", err, cmp.Tail(ch.Stderr))
	}
	return timed{Command: c.Name, Wall: ch.Wall, CPU: ch.CPU, ExitCode: ch.ExitCode, answer: a, Report: cmp.RawJSON(ch.Stdout)}, nil
}
