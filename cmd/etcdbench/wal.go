package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/disk"
	"etcdbench/internal/run"
	"etcdbench/internal/stats"
	"etcdbench/internal/trace"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// walFlags are the raw command-line values of the WAL check.
type walFlags struct {
	dir                            dirFlag
	bs, size, runtime, minRuntime  string
	rate                           string // open loop: entries per second
	entryBytes                     int
	count, minSamples              int64
	fromDataDir                    string // --bs auto: decode this etcd's WAL
	fromPID                        int    // --bs auto: decode this running etcd's WAL
	timeBased                      bool
	speed                          speedFlags
	out                            outputFlags
	prog                           progressFlags
	p99                            p99Flags
	minIOPS, heavyIOPS, warnMargin float64
}

// walOptions are the validated options of one WAL check.
type walOptions struct {
	dir        string
	cfg        disk.WALConfig
	thresholds verdict.Thresholds
	output     string
	progress   io.Writer // a terminal for the live line, or nil
}

// defaultWALFlags are disk wal's defaults: the default preset's WAL.
func defaultWALFlags() *walFlags {
	th := verdict.Defaults()
	f := &walFlags{entryBytes: 370, minIOPS: th.SyncIOPSMin.Limit, heavyIOPS: th.SyncIOPSHeavy.Limit, warnMargin: 100 * th.WarnMargin.Limit}
	f.fromPreset(walPreset("default"))
	return f
}

// fromPreset sets the run's defaults from a preset's WAL.
func (f *walFlags) fromPreset(w disk.WALParams) {
	f.bs = strconv.Itoa(w.BlockSize)
	f.runtime, f.minRuntime, f.minSamples = w.Runtime.String(), w.MinRuntime.String(), w.MinSamples
}

// walPreset is the WAL run of disk's preset called name.
func walPreset(name string) disk.WALParams {
	for _, p := range disk.Presets() {
		if p.Name == name {
			return p.WAL
		}
	}
	return disk.WALParams{}
}

func (f *walFlags) register(fs *pflag.FlagSet) {
	f.dir.register(fs, "", dirUsage)
	fs.StringVar(&f.bs, "bs", f.bs, "bytes per write(), i.e. etcd's WAL batch size (2300: the Kubernetes figure of the fio recipe); auto: the median batch of a real etcd's WAL (--from-data-dir or --from-pid)")
	fs.StringVar(&f.fromDataDir, "from-data-dir", "", "with --bs auto: read the batch size from this etcd data dir's WAL (offline, read-only; see etcdbench diagnose wal)")
	fs.IntVar(&f.fromPID, "from-pid", 0, "with --bs auto: the batch size of this running etcd's WAL, watched for 5 s by the eBPF tracer (root), else decoded from its segments found in /proc/PID/fd")
	fs.StringVar(&f.rate, "rate", "", "open loop: entries of --entry-bytes arrive at this many per second on a schedule, whatever the disk does, and each write() + fdatasync() carries every entry waiting, as etcd's WAL batches raft's proposals; latency counts from each entry's scheduled arrival (e.g. 1000 or 2.5k)")
	fs.IntVar(&f.entryBytes, "entry-bytes", f.entryBytes, "with --rate: bytes per WAL entry (about 370 for an 8-byte key and a 256-byte value)")
	fs.StringVar(&f.size, "size", f.size, "stop after writing this much, like fio --size (e.g. 22m); default: adaptive")
	fs.Int64Var(&f.count, "count", f.count, "stop after this many write+fdatasync cycles; default: adaptive")
	fs.StringVar(&f.runtime, "runtime", f.runtime, "cap on the run's time; with --time-based, the exact run time")
	fs.BoolVar(&f.timeBased, "time-based", f.timeBased, "run for exactly --runtime instead of stopping when the verdict is decided")
	fs.StringVar(&f.minRuntime, "min-runtime", f.minRuntime, "adaptive mode: never stop earlier (guards against quiet stretches between periodic stalls)")
	fs.Int64Var(&f.minSamples, "min-samples", f.minSamples, "adaptive mode: never stop with fewer fdatasyncs")
	f.p99.register(fs)
	fs.Float64Var(&f.minIOPS, "min-iops", f.minIOPS, "minimum sequential synced IOPS (etcd hardware guide: 50)")
	fs.Float64Var(&f.heavyIOPS, "heavy-iops", f.heavyIOPS, "sequential synced IOPS recommended for heavy load (etcd hardware guide: 500)")
	fs.Float64Var(&f.warnMargin, "warn-margin", f.warnMargin, "WARN when the p99 is within this many percent under its threshold")
	f.speed.register(fs, "the quick preset's run: "+walPresetWords("quick"), "the thorough preset's run: "+walPresetWords("thorough"))
	f.out.register(fs)
	f.prog.register(fs)
}

// walPresetWords says what a preset's WAL run is, for --quick and
// --thorough's help.
func walPresetWords(name string) string {
	w := walPreset(name)
	return fmt.Sprintf("--min-runtime %v, --min-samples %d, --runtime %v (each still settable)", w.MinRuntime, w.MinSamples, w.Runtime)
}

func newWALCmd(stdout, stderr io.Writer) *cobra.Command {
	wf := defaultWALFlags()
	cmd := &cobra.Command{
		Use:   "wal --dir DIR",
		Short: "Time etcd's WAL appends (write + fdatasync) against the 10 ms p99",
		Long: `Creates a scratch directory inside --dir, preallocates a segment with fallocate
as etcd does, then repeats one sequential write() of --bs bytes followed by one
fdatasync(), timing both. By default it stops as soon as the p99 verdict is
statistically decided (never before --min-runtime and --min-samples, never
after --runtime); --size, --count or --time-based give a fixed amount instead.` + exitCodesHelp,
		Example: `  etcdbench disk wal --dir /var/lib/etcd
  etcdbench disk wal --dir /var/lib/etcd --size 22m --bs 2300   # the fio recipe
  etcdbench disk wal --dir . --output json > wal.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := wf.dir.require(dirWhat, ""); err != nil {
				return err
			}
			return runWALCommand(cmd, wf, stdout, stderr)
		},
	}
	wf.register(cmd.Flags())
	return cmd
}

// options validates the flags; every mistake is a usage error.
func (f *walFlags) options(changed func(string) bool, stderr io.Writer) (walOptions, error) {
	o := walOptions{dir: f.dir.path, output: f.out.output, thresholds: verdict.Defaults()}
	o.thresholds.RunLonger = "--runtime" // disk wal's cap on the run's time
	if err := f.out.check(); err != nil {
		return o, err
	}
	preset, err := f.speed.name("default", "", false)
	if err != nil {
		return o, err
	}
	if preset != "default" {
		// The preset's run, where the command line does not set it.
		w := walPreset(preset)
		if !changed("runtime") {
			f.runtime = w.Runtime.String()
		}
		if !changed("min-runtime") {
			f.minRuntime = w.MinRuntime.String()
		}
		if !changed("min-samples") {
			f.minSamples = w.MinSamples
		}
	}
	bs, err := units.ParseSize(f.bs)
	if err != nil {
		return o, run.Usagef("--bs: %v", err)
	}
	if bs <= 0 || bs > 64<<20 {
		return o, run.Usagef("--bs must be between 1 byte and 64m, got %q", f.bs)
	}
	rt, err := units.ParseDuration(f.runtime)
	if err != nil {
		return o, run.Usagef("--runtime: %v", err)
	}
	minRT, err := units.ParseDuration(f.minRuntime)
	if err != nil {
		return o, run.Usagef("--min-runtime: %v", err)
	}
	p99, err := f.p99.resolve(changed, &o.thresholds)
	if err != nil {
		return o, err
	}
	if f.minSamples < 0 || f.minIOPS < 0 || f.heavyIOPS < 0 || f.warnMargin < 0 || f.warnMargin >= 100 {
		return o, run.Usagef("--min-samples, --min-iops and --heavy-iops must not be negative, --warn-margin must be 0-99")
	}

	cfg := disk.WALConfig{
		BlockSize: int(bs), Runtime: rt, Mode: disk.ModeAdaptive,
		Rule: stats.StopRule{
			Threshold: p99, Quantile: 0.99, Confidence: f.p99.confidence,
			MinSamples: f.minSamples, MinDuration: minRT, Interval: time.Second,
		},
	}
	if changed("rate") {
		rate, err := disk.ParseRate(f.rate)
		if err != nil {
			return o, run.Usagef("--rate: %v", err)
		}
		if changed("bs") || changed("size") || changed("count") {
			return o, run.Usagef("--rate writes whatever entries are waiting, so --bs, --size and --count do not apply: give the entry size with --entry-bytes")
		}
		if f.entryBytes <= 0 || f.entryBytes > 1<<20 {
			return o, run.Usagef("--entry-bytes must be between 1 and 1048576, got %d", f.entryBytes)
		}
		cfg.Rate, cfg.BlockSize = rate, f.entryBytes
	} else if changed("entry-bytes") {
		return o, run.Usagef("--entry-bytes goes with --rate")
	}
	modes := 0
	if changed("size") {
		modes++
		size, err := units.ParseSize(f.size)
		if err != nil {
			return o, run.Usagef("--size: %v", err)
		}
		if size < bs {
			return o, run.Usagef("--bs %s is larger than --size %s", f.bs, f.size)
		}
		cfg.Mode, cfg.Size = disk.ModeSize, size
	}
	if changed("count") {
		modes++
		if f.count <= 0 {
			return o, run.Usagef("--count must be positive, got %d", f.count)
		}
		cfg.Mode, cfg.Count = disk.ModeCount, f.count
	}
	if f.timeBased {
		modes++
		cfg.Mode = disk.ModeTime
	}
	if modes > 1 {
		return o, run.Usagef("--size, --count and --time-based are alternatives: give at most one")
	}
	if cfg.Mode != disk.ModeAdaptive && !changed("runtime") {
		cfg.Runtime = 0 // fixed amounts run to completion unless capped explicitly
		if cfg.Mode == disk.ModeTime {
			cfg.Runtime = rt
		}
	}
	if (cfg.Mode == disk.ModeAdaptive || cfg.Mode == disk.ModeTime) && cfg.Runtime <= 0 {
		return o, run.Usagef("--runtime must be positive in %s mode", cfg.Mode)
	}
	if err := cfg.Validate(); err != nil {
		return o, run.Usage(err)
	}

	th := &o.thresholds
	if changed("min-iops") {
		th.SyncIOPSMin.Override(f.minIOPS, "--min-iops")
	}
	if changed("heavy-iops") {
		th.SyncIOPSHeavy.Override(f.heavyIOPS, "--heavy-iops")
	}
	if changed("warn-margin") {
		th.WarnMargin.Override(f.warnMargin/100, "--warn-margin")
	}
	o.cfg = cfg
	o.progress = f.prog.terminal(stderr, f.out.output)
	return o, nil
}

// runWALCommand validates the flags of cmd and runs the WAL check.
func runWALCommand(cmd *cobra.Command, f *walFlags, stdout, stderr io.Writer) error {
	if f.bs == "auto" {
		bs, from, err := trace.AutoBS(cmd.Context(), procRoot, f.fromDataDir, f.fromPID)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "--bs auto = %d: %s\n", bs, from)
		f.bs = strconv.FormatInt(bs, 10)
	} else if f.fromDataDir != "" || f.fromPID != 0 {
		return run.Usagef("--from-data-dir and --from-pid go with --bs auto")
	}
	o, err := f.options(cmd.Flags().Changed, stderr)
	if err != nil {
		return err
	}
	return runDisk(cmd.Context(), disk.Suite{
		Dir: o.dir, Workloads: []disk.Named{{Name: "wal", Workload: disk.NewWALWorkload(o.cfg)}},
		Thresholds: o.thresholds, Progress: o.progress, Args: commandLine(cmd),
		SpaceHint: "free some space, or give a fixed --size (the adaptive mode keeps two 64 MB segments)",
	}, o.output, stdout)
}
