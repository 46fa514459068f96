package cmp

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Main is the main function of a comparison named name (e.g.
// "wal-vs-fio"): it parses the command line with parse, runs the
// comparison with run until SIGINT or SIGTERM cancels it, and exits with
// the code Execute gives.
func Main[O any](name string, parse func(args []string, stderr io.Writer) (O, error),
	run func(ctx context.Context, opts O, stdout, stderr io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := Execute(ctx, name, os.Args[1:], os.Stdout, os.Stderr, parse, run)
	stop()
	os.Exit(code)
}

// Execute parses args with parse, runs the comparison with run and maps
// the outcome to an exit code (see ExitCode).
func Execute[O any](ctx context.Context, name string, args []string, stdout, stderr io.Writer,
	parse func(args []string, stderr io.Writer) (O, error),
	run func(ctx context.Context, opts O, stdout, stderr io.Writer) error) int {
	opts, err := parse(args, stderr)
	if err == nil {
		err = run(ctx, opts, stdout, stderr)
	}
	return ExitCode(name, err, stderr)
}

// ParseFlags parses args for the comparison name: the common flags into c
// and those register adds. --help prints "usage: bench/NAME/run [flags]",
// about, and the flags. It returns Parse's error, or else c.Check's.
func ParseFlags(name, about string, c *Common, args []string, stderr io.Writer, register func(fs *flag.FlagSet)) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.Register(fs)
	register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bench/%s/run [flags]\n\n%s\n\nFlags:\n", name, about)
		fs.PrintDefaults()
	}
	if err := Parse(fs, args); err != nil {
		return err
	}
	c.Args = args
	return c.Check()
}
