// Command seq-vs-fio (bench/seq-vs-fio/run) compares etcdbench's sequential workloads with the fio
// jobs they reproduce, on one directory:
//
//   - snapshot: fio --rw=write --bs=1m --size=S --end_fsync=1
//     --ioengine=psync against `etcdbench disk snapshot --size S --bs 1m`,
//     durable bandwidth (bytes / time until the final sync returned);
//   - recovery: fio --rw=read --bs=1m --direct=1 --size=S --ioengine=psync
//     on a laid-out file against `etcdbench disk recovery --size S --bs 1m
//     --random-runtime 0`, sequential read bandwidth.
//
// Rounds alternate the order of the runs; it reports the medians of the
// per-round ratios etcdbench/fio of bandwidth and CPU per GiB (see
// cpuPerGiB for how CPU is made comparable).
//
// It is a measurement, not a test: the exit status is 0 whatever the
// ratios, 1 when a tool failed to run, 2 for bad flags or a missing fio,
// 130 when interrupted. See bench/README.md.
package main

import (
	"flag"
	"fmt"
	"io"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/units"
)

const name = "seq-vs-fio"

// params are passed to both tools as given.
type params struct {
	BS, Size string
}

// options are the parsed flags.
type options struct {
	cmp.Common
	params
	Warm bool
}

func main() { cmp.Main(name, parseFlags, run) }

// parseFlags turns the command line into options.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	o := options{Common: c, params: params{BS: "1m", Size: "1g"}, Warm: true}
	err = cmp.ParseFlags(name, "Compares `etcdbench disk snapshot` and `disk recovery` with fio's sequential write and read on one directory.", &o.Common, args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&o.BS, "bs", o.BS, "bytes per write() and read(), for both tools (a multiple of 4k)")
		fs.StringVar(&o.Size, "size", o.Size, "bytes written (snapshot) and read back (recovery), for both tools (fio syntax: 1g = 1 GiB)")
		fs.BoolVar(&o.Warm, "warm", o.Warm, "write and delete a --size file in --dir just before each snapshot run, so that both tools' page cache gets recently used memory (see bench/README.md)")
	})
	if err != nil {
		return o, err
	}
	return o, o.params.check()
}

// check rejects sizes that cannot be passed to both tools.
func (p params) check() error {
	size, err := units.ParseSize(p.Size)
	if err != nil || size <= 0 {
		return cmp.UsageError{Err: fmt.Errorf("--size %q: want a positive size such as 256m or 1g", p.Size)}
	}
	bs, err := units.ParseSize(p.BS)
	if err != nil || bs <= 0 || bs%4096 != 0 || bs > size {
		return cmp.UsageError{Err: fmt.Errorf("--bs %q: want a multiple of 4k no larger than --size (O_DIRECT reads need it)", p.BS)}
	}
	return nil
}
