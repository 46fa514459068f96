// Command mixed-vs-fio (bench/mixed-vs-fio/run) compares `etcdbench disk mixed` with the fio job it
// reproduces (4 KiB random reads and writes, 80 % reads, O_DIRECT,
// numjobs x iodepth in flight, all jobs on one shared file) on one
// directory. Each round runs fio with every engine of --fio-engines
// (io_uring and libaio by default) and etcdbench with its io_uring engine,
// and, with --psync, both tools' pread/pwrite engines; the runs alternate
// order from round to round. It reports the medians of the per-round
// ratios etcdbench/fio of total IOPS, CPU per I/O and read p99 latency.
//
// CPU per I/O counts the I/O alone: fio's child CPU less a prepare-only
// run's (start-up; this program lays out fio's file), etcdbench's own CPU
// figure for its timed part (see cmp.Measurement.IOCPU).
//
// It is a measurement, not a test: the exit status is 0 whatever the
// ratios, 1 when a tool failed to run, 2 for bad flags or a missing fio,
// 130 when interrupted. See bench/README.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/units"
)

const name = "mixed-vs-fio"

// params is the job both tools run, passed to both as given.
type params struct {
	BS, Size, Runtime string
	NumJobs, IODepth  int
	RWMixRead         int
}

// options are the parsed flags.
type options struct {
	cmp.Common
	params
	FioEngines []string
	Psync      bool
}

func main() { cmp.Main(name, parseFlags, run) }

var engineName = regexp.MustCompile(`^[a-z0-9_]+$`)

// parseFlags turns the command line into options.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	o := options{Common: c, params: params{BS: "4k", Size: "256m", Runtime: "10s", NumJobs: 4, IODepth: 8, RWMixRead: 80}, Psync: true}
	engines := "io_uring,libaio"
	err = cmp.ParseFlags(name, "Compares `etcdbench disk mixed` with fio's mixed random I/O job on one directory.", &o.Common, args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&o.BS, "bs", o.BS, "bytes per I/O, for both tools")
		fs.StringVar(&o.Size, "size", o.Size, "size of the one file all jobs share, for both tools (fio syntax: 256m = 256 MiB)")
		fs.StringVar(&o.Runtime, "runtime", o.Runtime, "time of each measured run, for both tools (10s, 1m)")
		fs.IntVar(&o.NumJobs, "numjobs", o.NumJobs, "workers (fio jobs), for both tools; the seed articles use 20")
		fs.IntVar(&o.IODepth, "iodepth", o.IODepth, "I/Os each worker keeps in flight, for both tools")
		fs.IntVar(&o.RWMixRead, "rwmixread", o.RWMixRead, "percent of reads, for both tools")
		fs.StringVar(&engines, "fio-engines", engines, "comma-separated fio --ioengine values, each compared with etcdbench --engine io_uring")
		fs.BoolVar(&o.Psync, "psync", o.Psync, "also compare etcdbench --engine psync with fio --ioengine=psync each round (--psync=false to skip)")
	})
	if err != nil {
		return o, err
	}
	for _, e := range strings.Split(engines, ",") {
		if e = strings.TrimSpace(e); e != "" {
			if !engineName.MatchString(e) {
				return o, cmp.UsageError{Err: fmt.Errorf("--fio-engines: %q is not a fio engine name", e)}
			}
			o.FioEngines = append(o.FioEngines, e)
		}
	}
	if len(o.FioEngines) == 0 {
		return o, cmp.UsageError{Err: errors.New("--fio-engines names no engine")}
	}
	return o, o.params.check()
}

// check rejects parameters that cannot be passed to both tools.
func (p params) check() error {
	bad := func(format string, a ...any) error { return cmp.UsageError{Err: fmt.Errorf(format, a...)} }
	switch {
	case p.BS == "" || p.Size == "":
		return bad("--bs and --size must not be empty")
	case p.NumJobs < 1 || p.NumJobs > 256:
		return bad("--numjobs %d: want 1 to 256 (etcdbench's limit)", p.NumJobs)
	case p.IODepth < 1 || p.IODepth > 1024:
		return bad("--iodepth %d: want 1 to 1024 (etcdbench's limit)", p.IODepth)
	case p.RWMixRead < 0 || p.RWMixRead > 100:
		return bad("--rwmixread %d: want 0 to 100", p.RWMixRead)
	}
	if d, err := units.ParseDuration(p.Runtime); err != nil || d <= 0 {
		return bad("--runtime %q: want a positive duration such as 10s or 1m", p.Runtime)
	}
	size, err := units.ParseSize(p.Size)
	if err != nil || size <= 0 {
		return bad("--size %q: want a positive size such as 256m", p.Size)
	}
	if bs, err := units.ParseSize(p.BS); err != nil || bs <= 0 || bs%4096 != 0 || bs > size {
		return bad("--bs %q: want a multiple of 4k no larger than --size", p.BS)
	}
	return nil
}
