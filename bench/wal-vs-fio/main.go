// Command wal-vs-fio (bench/wal-vs-fio/run) compares `etcdbench disk wal` with the fio recipe it
// reproduces (fio --rw=write --ioengine=sync --fdatasync=1 --bs=2300
// --size=22m) on one directory: fdatasync p50 and p99, syncs, wall time and
// CPU time per sync, over several rounds that alternate which tool goes
// first, and reports the median of the per-round ratios etcdbench/fio
// against the targets in targets(). It also runs fio a second time each
// round, as an A/A control, and compares each kind of run's fdatasyncs
// pooled over all rounds, with a bootstrap interval (pooled.go); and
// etcdbench's adaptive mode, to show how many syncs and seconds its stop
// rule needs.
//
// It is a measurement, not a test: the exit status is 0 whatever the
// ratios, 1 when a tool failed to run, 2 for bad flags or a missing fio,
// 130 when interrupted. See bench/README.md.
package main

import (
	"errors"
	"flag"
	"io"

	"etcdbench/bench/internal/cmp"
)

// options are the parsed flags.
type options struct {
	cmp.Common
	BS, Size string
	Adaptive bool
	Control  bool
}

func main() { cmp.Main("wal-vs-fio", parseFlags, run) }

// parseFlags turns the command line into options.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	o := options{Common: c, BS: "2300", Size: "22m", Adaptive: true, Control: true}
	err = cmp.ParseFlags("wal-vs-fio", "Compares `etcdbench disk wal --size S --bs B` with fio's WAL recipe on one directory.", &o.Common, args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&o.BS, "bs", o.BS, "bytes per write(), for both tools")
		fs.StringVar(&o.Size, "size", o.Size, "bytes written per fixed-size run, for both tools (fio syntax: 22m = 22 MiB)")
		fs.BoolVar(&o.Adaptive, "adaptive", o.Adaptive, "also run etcdbench's adaptive mode each round (use --adaptive=false to skip)")
		fs.BoolVar(&o.Control, "control", o.Control, "also run fio a second time each round, an A/A control that shows the noise floor (use --control=false to skip)")
	})
	if err != nil {
		return o, err
	}
	if o.BS == "" || o.Size == "" {
		return o, cmp.UsageError{Err: errors.New("--bs and --size must not be empty")}
	}
	return o, nil
}
