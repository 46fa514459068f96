package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/disk"
	"etcdbench/internal/run"
	"etcdbench/internal/trace"
	"etcdbench/internal/verdict"
)

// walFlags are the command-line values of the WAL check.
type walFlags struct {
	dir                            dirFlag
	req                            disk.WALRequest
	fromDataDir                    string // --bs auto: decode this etcd's WAL
	fromPID                        int    // --bs auto: decode this running etcd's WAL
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
	return &walFlags{req: disk.WALDefaults("default"), minIOPS: th.SyncIOPSMin.Limit, heavyIOPS: th.SyncIOPSHeavy.Limit, warnMargin: 100 * th.WarnMargin.Limit}
}

func (f *walFlags) register(fs *pflag.FlagSet) {
	f.dir.register(fs, "", dirUsage)
	fs.StringVar(&f.req.BlockSize, "bs", f.req.BlockSize, "bytes per write(), i.e. etcd's WAL batch size (2300: the Kubernetes figure of the fio recipe); auto: the median batch of a real etcd's WAL (--from-data-dir or --from-pid)")
	fs.StringVar(&f.fromDataDir, "from-data-dir", "", "with --bs auto: read the batch size from this etcd data dir's WAL (offline, read-only; see etcdbench diagnose wal)")
	fs.IntVar(&f.fromPID, "from-pid", 0, "with --bs auto: the batch size of this running etcd's WAL, watched for 5 s by the eBPF tracer (root), else decoded from its segments found in /proc/PID/fd")
	fs.StringVar(&f.req.Rate, "rate", "", "open loop: entries of --entry-bytes arrive at this many per second on a schedule, whatever the disk does, and each write() + fdatasync() carries every entry waiting, as etcd's WAL batches raft's proposals; latency counts from each entry's scheduled arrival (e.g. 1000 or 2.5k)")
	fs.IntVar(&f.req.EntryBytes, "entry-bytes", f.req.EntryBytes, "with --rate: bytes per WAL entry (about 370 for an 8-byte key and a 256-byte value)")
	fs.StringVar(&f.req.Size, "size", f.req.Size, "stop after writing this much, like fio --size (e.g. 22m); default: adaptive")
	fs.Int64Var(&f.req.Count, "count", f.req.Count, "stop after this many write+fdatasync cycles; default: adaptive")
	fs.StringVar(&f.req.Runtime, "runtime", f.req.Runtime, "cap on the run's time; with --time-based, the exact run time")
	fs.BoolVar(&f.req.TimeBased, "time-based", f.req.TimeBased, "run for exactly --runtime instead of stopping when the verdict is decided")
	fs.StringVar(&f.req.MinRuntime, "min-runtime", f.req.MinRuntime, "adaptive mode: never stop earlier (guards against quiet stretches between periodic stalls)")
	fs.Int64Var(&f.req.MinSamples, "min-samples", f.req.MinSamples, "adaptive mode: never stop with fewer fdatasyncs")
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
	w := disk.WALDefaults(name)
	return fmt.Sprintf("--min-runtime %s, --min-samples %d, --runtime %s (each still settable)", w.MinRuntime, w.MinSamples, w.Runtime)
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
	if f.req.P99, err = f.p99.resolve(changed, &o.thresholds); err != nil {
		return o, err
	}
	f.req.Preset, f.req.Confidence, f.req.Given = preset, f.p99.confidence, changed
	if o.cfg, err = f.req.Config(); err != nil {
		return o, run.Usage(err)
	}
	if f.minIOPS < 0 || f.heavyIOPS < 0 || f.warnMargin < 0 || f.warnMargin >= 100 {
		return o, run.Usagef("--min-iops and --heavy-iops must not be negative, --warn-margin must be 0-99")
	}
	th := &o.thresholds
	for _, v := range []struct {
		flag  string
		limit *verdict.Threshold
		value float64
	}{
		{"min-iops", &th.SyncIOPSMin, f.minIOPS}, {"heavy-iops", &th.SyncIOPSHeavy, f.heavyIOPS}, {"warn-margin", &th.WarnMargin, f.warnMargin / 100},
	} {
		if changed(v.flag) {
			v.limit.Override(v.value, "--"+v.flag)
		}
	}
	o.progress = f.prog.terminal(stderr, f.out.output)
	return o, nil
}

// runWALCommand validates the flags of cmd and runs the WAL check.
func runWALCommand(cmd *cobra.Command, f *walFlags, stdout, stderr io.Writer) error {
	if f.req.BlockSize == "auto" {
		bs, from, err := trace.AutoBS(cmd.Context(), procRoot, f.fromDataDir, f.fromPID)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "--bs auto = %d: %s\n", bs, from)
		f.req.BlockSize = strconv.FormatInt(bs, 10)
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
