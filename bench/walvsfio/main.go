// Command walvsfio compares `etcdbench disk wal` with the fio recipe it
// reproduces (fio --rw=write --ioengine=sync --fdatasync=1 --bs=2300
// --size=22m) on one directory: fdatasync p50 and p99, syncs, wall time and
// CPU time per sync, over several rounds that alternate which tool goes
// first, and reports the median of the per-round ratios etcdbench/fio
// against the targets in targets(). It also runs etcdbench's adaptive mode
// each round, to show how many syncs and seconds its stop rule needs.
//
// It is a measurement, not a test: the exit status is 0 whatever the
// ratios, 1 when a tool failed to run, 2 for bad flags or a missing fio,
// 130 when interrupted. See bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK          = 0
	exitRunFailed   = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// callerDirEnv names the directory bench/wal-vs-fio was started from; the
// script changes to the repository root for `go run`, and relative paths
// in flags (and the default --dir) are resolved against this one.
const callerDirEnv = "WALVSFIO_CALLER_DIR"

// options are the parsed flags.
type options struct {
	Dir       string // directory under test; "" makes a temporary one in Base
	Rounds    int
	BS, Size  string
	Etcdbench string // "" builds ./cmd/etcdbench
	Fio       string
	Adaptive  bool
	JSON      string // "" writes no JSON file
	Base      string // the caller's directory
	ModuleDir string // where ./cmd/etcdbench is built from
}

// minRounds is the fewest rounds whose median means anything.
const minRounds = 3

// usageError marks a mistake in the flags or the environment the user can fix.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// execute parses args, runs the comparison and maps the outcome to an exit code.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err == nil {
		err = run(ctx, opts, stdout, stderr)
	}
	var u usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "wal-vs-fio: interrupted; test files removed")
		return exitInterrupted
	case errors.As(err, &u):
		fmt.Fprintf(stderr, "wal-vs-fio: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "wal-vs-fio: %v\n", err)
	return exitRunFailed
}

// parseFlags turns the command line into options.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return options{}, err
	}
	o := options{Rounds: 5, BS: "2300", Size: "22m", Fio: "fio", Adaptive: true, Base: cwd, ModuleDir: cwd}
	if d := os.Getenv(callerDirEnv); d != "" {
		o.Base = d
	}
	fs := flag.NewFlagSet("wal-vs-fio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Dir, "dir", "", "directory to test; default: a new temporary directory under the current one, removed at the end")
	fs.IntVar(&o.Rounds, "rounds", o.Rounds, fmt.Sprintf("rounds, each running both tools (at least %d)", minRounds))
	fs.StringVar(&o.BS, "bs", o.BS, "bytes per write(), for both tools")
	fs.StringVar(&o.Size, "size", o.Size, "bytes written per fixed-size run, for both tools (fio syntax: 22m = 22 MiB)")
	fs.StringVar(&o.Etcdbench, "etcdbench", "", "etcdbench binary; default: go build ./cmd/etcdbench into a temporary directory")
	fs.StringVar(&o.Fio, "fio", o.Fio, "fio binary")
	fs.BoolVar(&o.Adaptive, "adaptive", o.Adaptive, "also run etcdbench's adaptive mode each round (use --adaptive=false to skip)")
	fs.StringVar(&o.JSON, "json", "", "write every run's figures, the tools' raw JSON reports and the summary to this file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bench/wal-vs-fio [flags]\n\nCompares `etcdbench disk wal --size S --bs B` with fio's WAL recipe on one directory.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, usageError{err}
	}
	if fs.NArg() > 0 {
		return o, usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	if o.Rounds < minRounds {
		return o, usageError{fmt.Errorf("--rounds %d: need at least %d for a median", o.Rounds, minRounds)}
	}
	if o.BS == "" || o.Size == "" {
		return o, usageError{errors.New("--bs and --size must not be empty")}
	}
	return o, nil
}
