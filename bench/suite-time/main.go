// Command suite-time (bench/suite-time/run) measures the test suite as a
// new contributor meets it: each round clones the repository's HEAD into
// a new directory and runs the README's test command there (the line of
// its set-up block marked "# the tests", with -json added) with CI=true
// (as .ci/run does), from an empty build
// cache (a cold GOCACHE of its own, so every dependency is compiled), and
// with --warm a second time on the same clone and cache. It records the
// wall time of each run against the limit (8 minutes on a fresh clone with
// a cold cache), the time until the first test binary started (the
// compile the cold cache costs), and the packages that took longest.
//
// A round is long (a whole suite), so one round is allowed: a figure, not
// a median; give --rounds 3 for one.
//
// It is a measurement, not a test: exit 0 whatever the times, 1 when the
// suite failed or could not run, 2 for bad flags, 130 when interrupted.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"etcdbench/bench/internal/cmp"
)

const name = "suite-time"

// limit is the suite's time on a fresh clone with a cold cache.
const (
	limit       = 8 * time.Minute
	limitSource = "issue 36: the test suite <= 8 min on a fresh clone with a cold cache (2 CPUs)"
)

type options struct {
	cmp.Common
	warm bool
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds, c.FewestRounds = true, 1, 1
	o := options{Common: c}
	err = cmp.ParseFlags(name, "How long the README's test command takes on a fresh clone of HEAD with a cold build cache (and, with --warm, again with the cache warm).", &o.Common, args, stderr,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&o.warm, "warm", false, "also run the suite a second time on the same clone with the cache the first run filled")
		})
	return o, err
}

// suiteRun is one run of the suite.
type suiteRun struct {
	Round   int           `json:"round"`
	Cache   string        `json:"cache"`   // cold or warm
	Command string        `json:"command"` // as run, -json added
	Wall    time.Duration `json:"wall_ns"`
	// FirstTest is the time from the command's start to the first test
	// binary's start: what compiling cost before any test ran.
	FirstTest time.Duration `json:"first_test_ns"`
	Packages  []pkgTime     `json:"packages"`
	Failed    []string      `json:"failed,omitempty"`
	// FailedOutput is what the failed tests printed, their last lines.
	FailedOutput string `json:"failed_output,omitempty"`
	ExitCode     int    `json:"exit_code"`
}

// jsonFile is the layout of the --json file.
type jsonFile struct {
	Started time.Time  `json:"started_at"`
	Commit  string     `json:"commit"`
	Runs    []suiteRun `json:"runs"`
	Error   string     `json:"error,omitempty"`
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	out := jsonFile{Started: time.Now().UTC()}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)
	commit, err := exec.CommandContext(ctx, "git", "-C", o.ModuleDir, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return fmt.Errorf("git rev-parse in %s: %w", o.ModuleDir, err)
	}
	out.Commit = strings.TrimSpace(string(commit))
	load0, err := cmp.LoadAverage()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: the README's test command on a fresh clone of %s (CI=true), cold cache, %d round(s)\n\n", name, out.Commit, o.Rounds)
	for n := 1; n <= o.Rounds; n++ {
		runs, err := runRound(ctx, o, env.Dir, n, stdout, stderr)
		out.Runs = append(out.Runs, runs...)
		if err != nil {
			return err
		}
	}
	var table bytes.Buffer
	figures := summarize(io.MultiWriter(stdout, &table), out.Runs)
	res := cmp.Result{Bench: name, Source: "measured: " + strings.Join(append([]string{"bench/" + name + "/run"}, o.Args...), " ") + " at " + out.Commit,
		Machine: cmp.Machine(env.Dir), Rounds: o.Rounds, Figures: figures, Table: table.String()}
	return cmp.SaveResult(o.Abs(o.Results), res, load0, out.Started)
}

// runRound clones HEAD into a new directory under dir and runs the suite
// there from a cold cache (and again warm with --warm); the directory,
// build cache included (GBs), is removed whatever happens.
func runRound(ctx context.Context, o options, dir string, n int, stdout, stderr io.Writer) (runs []suiteRun, err error) {
	round, err := os.MkdirTemp(dir, fmt.Sprintf("round-%d-", n))
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(round)) }()
	clone, cache := filepath.Join(round, "clone"), filepath.Join(round, "gocache")
	if b, err := exec.CommandContext(ctx, "git", "clone", "-q", o.ModuleDir, clone).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git clone: %w: %s", err, b)
	}
	caches := []string{"cold"}
	if o.warm {
		caches = append(caches, "warm")
	}
	for _, c := range caches {
		fmt.Fprintf(stderr, "round %d/%d: the suite, %s cache ...\n", n, o.Rounds, c)
		r, err := runSuite(ctx, clone, cache)
		if err != nil {
			return runs, fmt.Errorf("round %d (%s): %w", n, c, err)
		}
		r.Round, r.Cache = n, c
		runs = append(runs, r)
		renderRun(stdout, r)
		if r.ExitCode != 0 {
			fmt.Fprint(stderr, r.FailedOutput)
			return runs, fmt.Errorf("round %d (%s): the suite failed (exit %d): %s", n, c, r.ExitCode, strings.Join(r.Failed, ", "))
		}
	}
	return runs, nil
}

// runSuite runs the README's test command in clone with the build
// cache in cache.
func runSuite(ctx context.Context, clone, cache string) (suiteRun, error) {
	env, argv, err := testCommand(filepath.Join(clone, "README.md"))
	if err != nil {
		return suiteRun{}, err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = clone
	cmd.Env = append(append(os.Environ(), env...), "CI=true", "GOCACHE="+cache)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C stops the test binaries too
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	var events, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &events, &errs
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if ctx.Err() != nil {
		return suiteRun{}, ctx.Err()
	}
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return suiteRun{}, err
	}
	s, perr := parseEvents(&events)
	if perr != nil {
		return suiteRun{}, fmt.Errorf("reading go test -json: %w%s", perr, cmp.Tail(errs.Bytes()))
	}
	r := suiteRun{Command: strings.Join(append(env, argv...), " "), Wall: wall, Packages: s.packages, Failed: s.failed, FailedOutput: s.failedOutput, ExitCode: code}
	if !s.firstStart.IsZero() {
		r.FirstTest = s.firstStart.Sub(start)
	}
	return r, nil
}

// testCommand reads the README's test command: the line marked "# the
// tests", its leading NAME=VALUE words the environment, the rest a go
// test command line, given -json after "test".
func testCommand(readme string) (env, argv []string, err error) {
	b, err := os.ReadFile(readme)
	if err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		cmdline, comment, ok := strings.Cut(line, "#")
		if !ok || strings.TrimSpace(comment) != "the tests" {
			continue
		}
		words := strings.Fields(cmdline)
		for len(words) > 0 && strings.Contains(words[0], "=") {
			env, words = append(env, words[0]), words[1:]
		}
		if len(words) < 2 || words[0] != "go" || words[1] != "test" {
			return nil, nil, fmt.Errorf("%s: the line marked \"# the tests\" is not a go test command: %q", readme, line)
		}
		return env, append([]string{"go", "test", "-json"}, words[2:]...), nil
	}
	return nil, nil, fmt.Errorf("%s: no line marked \"# the tests\"", readme)
}
