package cmp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"etcdbench/internal/units"
)

// Exit codes of every comparison: measured (whatever the figures), a tool
// failed to run, bad flags or no fio, interrupted.
const (
	ExitOK          = 0
	ExitRunFailed   = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// MinRounds is the fewest rounds whose median means anything.
const MinRounds = 3

// CallerDirEnv names the directory a bench/ script was started from. The
// scripts change to the repository root to build and run the program;
// relative paths in flags (and the default --dir) are resolved against
// this directory instead.
const CallerDirEnv = "BENCH_CALLER_DIR"

// ErrFioMissing is returned (inside a UsageError) when the fio binary
// cannot be found.
var ErrFioMissing = errors.New("fio not found")

// UsageError marks a mistake in the flags or the environment the user can
// fix; it maps to ExitUsage.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Common are the flags every comparison takes.
type Common struct {
	Dir       string // directory under test; "" makes a temporary one in Base
	Rounds    int
	Etcdbench string // "" builds ./cmd/etcdbench
	Fio       string
	// NoFio marks a comparison that does not run fio (e.g. trace-overhead):
	// no --fio flag, and Setup does not look for it.
	NoFio bool
	// FewestRounds, when set, replaces MinRounds for a measurement whose
	// round is long (suite-time: a whole test suite from a cold cache).
	FewestRounds int
	JSON         string // "" writes no JSON file
	// Results is the directory of the committed result files
	// (bench/<name>/results): "" writes none.
	Results string
	// Args is the command line given (after the program's name).
	Args      []string
	Base      string // the caller's directory, for relative paths
	ModuleDir string // where ./cmd/etcdbench is built from
}

// DefaultCommon returns the defaults: 5 rounds, fio from PATH, paths
// relative to $BENCH_CALLER_DIR or else the current directory, which must
// be the module root for the default build of etcdbench.
func DefaultCommon() (Common, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return Common{}, err
	}
	c := Common{Rounds: 5, Fio: "fio", Base: cwd, ModuleDir: cwd}
	if d := os.Getenv(CallerDirEnv); d != "" {
		c.Base = d
	}
	return c, nil
}

// fewestRounds is the fewest rounds c's measurement takes.
func (c Common) fewestRounds() int {
	if c.FewestRounds > 0 {
		return c.FewestRounds
	}
	return MinRounds
}

// Register adds the common flags to fs, with c's values as defaults.
func (c *Common) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Dir, "dir", c.Dir, "directory to test; default: a new temporary directory under the current one, removed at the end")
	fewest := c.fewestRounds()
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, fmt.Sprintf("rounds, each running both tools (at least %d)", fewest))
	fs.StringVar(&c.Etcdbench, "etcdbench", c.Etcdbench, "etcdbench binary; default: go build ./cmd/etcdbench into a temporary directory")
	if !c.NoFio {
		fs.StringVar(&c.Fio, "fio", c.Fio, "fio binary")
	}
	fs.StringVar(&c.JSON, "json", c.JSON, "write every run's figures, the tools' raw JSON reports and the summary to this file")
	fs.StringVar(&c.Results, "results", c.Results, "also write the summary's figures and table, the rounds and the machine's load average, as DIR/<date>.json (commit it in bench/<name>/results: README.md and bench/README.md quote it)")
}

// Check reports a UsageError for common flags that cannot work.
func (c Common) Check() error {
	fewest := c.fewestRounds()
	if c.Rounds < fewest {
		return UsageError{fmt.Errorf("--rounds %d: need at least %d for a median", c.Rounds, fewest)}
	}
	if c.Fio == "" && !c.NoFio {
		return UsageError{errors.New("--fio must not be empty")}
	}
	return nil
}

// Parse parses args with fs: flag.ErrHelp is returned as is, any other
// mistake (positional arguments included) as a UsageError.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return UsageError{err}
	}
	if fs.NArg() > 0 {
		return UsageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	return nil
}

// Abs resolves p against the caller's directory unless it is absolute.
func (c Common) Abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Base, p)
}

// ExitCode maps the outcome of a comparison named name to its exit code,
// printing err (prefixed with name) to stderr.
func ExitCode(name string, err error, stderr io.Writer) int {
	var u UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "%s: interrupted; test files removed\n", name)
		return ExitInterrupted
	case errors.As(err, &u):
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitUsage
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return ExitRunFailed
}

// Env is what a comparison runs with: the tools, resolved, and the
// directory under test.
type Env struct {
	Fio        string // fio executable
	FioVersion string // `fio --version`, "" when unknown
	Etcdbench  string // etcdbench executable
	Dir        string // directory under test
	remove     []string
}

// Setup finds fio (unless c.NoFio), makes the test directory (unless --dir names one) and
// builds etcdbench (unless --etcdbench names one). name prefixes the
// temporary directories. Close removes what Setup made, also when Setup
// fails half-way (it then cleans up itself).
func Setup(ctx context.Context, c Common, name string, stderr io.Writer) (env *Env, err error) {
	env = &Env{}
	defer func() {
		if err != nil {
			err = errors.Join(err, env.Close())
			env = nil
		}
	}()
	if !c.NoFio {
		if env.Fio, err = exec.LookPath(c.Fio); err != nil {
			return env, UsageError{fmt.Errorf("%w (%v): install it (e.g. apt-get install fio) or pass --fio PATH", ErrFioMissing, err)}
		}
		env.FioVersion = FioVersion(ctx, env.Fio)
	}
	if c.Dir == "" {
		if env.Dir, err = os.MkdirTemp(c.Base, name+"-"); err != nil {
			return env, fmt.Errorf("creating a test directory in %s (or pass --dir): %w", c.Base, err)
		}
		env.remove = append(env.remove, env.Dir)
		if err := ignoreInGit(env.Dir); err != nil {
			return env, err
		}
	} else {
		env.Dir = c.Abs(c.Dir)
		if st, serr := os.Stat(env.Dir); serr != nil || !st.IsDir() {
			return env, UsageError{fmt.Errorf("--dir %s is not an existing directory", env.Dir)}
		}
	}
	if c.Etcdbench != "" {
		env.Etcdbench = c.Abs(c.Etcdbench)
		return env, nil
	}
	bin, err := os.MkdirTemp("", name+"-bin-")
	if err != nil {
		return env, err
	}
	env.remove = append(env.remove, bin)
	fmt.Fprintln(stderr, "building ./cmd/etcdbench ...")
	env.Etcdbench, err = BuildEtcdbench(ctx, c.ModuleDir, bin)
	return env, err
}

// ignoreInGit writes a .gitignore of "*" into dir. The default test
// directory is made in the current directory, usually the repository's
// root: a `git add -A` run while a comparison is under way (another
// session committing, an editor's auto-commit) would otherwise take in a
// test file of up to several GiB, as one did with a 256 MiB snapshot
// file. The pattern also ignores the .gitignore itself.
func ignoreInGit(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("# bench/ test directory, removed at the end of the run\n*\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s/.gitignore: %w", dir, err)
	}
	return nil
}

// Close removes the directories Setup created.
func (e *Env) Close() error {
	var errs []error
	for i := len(e.remove) - 1; i >= 0; i-- {
		if err := os.RemoveAll(e.remove[i]); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", e.remove[i], err))
		}
	}
	e.remove = nil
	return errors.Join(errs...)
}

// Release is deferred by a run after Setup: it closes e and reports a
// failure to do so through *err unless that already holds an error.
func (e *Env) Release(err *error) {
	if cerr := e.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

// ParseDurations parses the list s of --flag (durations of 0 or more,
// comma-separated, "2ms" or etcdbench's units) into durations.
func ParseDurations(flag, s string) ([]time.Duration, error) {
	var ds []time.Duration
	for _, f := range strings.Split(s, ",") {
		d, err := units.ParseDuration(strings.TrimSpace(f))
		if err != nil || d < 0 {
			return nil, UsageError{Err: fmt.Errorf("--%s %q: want durations of 0 or more, comma-separated", flag, f)}
		}
		ds = append(ds, d)
	}
	return ds, nil
}
