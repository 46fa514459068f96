package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// etcdFlags are the flags of the etcd load commands (put, range, txn,
// watch, mixed).
type etcdFlags struct {
	dir, output         string
	endpoints           []string
	yes, noProgress     bool
	conns, clients      int
	total               int64
	duration            string
	rate                float64
	keySize, valSize    int
	keySpaceSize        int
	sequentialKeys      bool
	consistency         string
	target              string
	txnOps              int
	readRatio           float64
	streams, watchers   int
	compact, defrag     bool
	members             int
	snapshotCount       uint64
	heartbeat, election string
	quotaBackendBytes   string
	batchInterval       string
	batchLimit          int
	security            securityFlags
}

func (f *etcdFlags) register(fs *pflag.FlagSet, op etcdload.Op) {
	d := etcdload.DefaultLoad(op)
	fs.StringVar(&f.dir, "dir", "", "directory on the disk to test: the embedded etcd's data goes into a scratch directory inside it, removed afterwards")
	fs.StringSliceVar(&f.endpoints, "endpoints", nil, "client URLs of an external cluster (a,b,c) instead of an embedded etcd; writing to it needs --yes")
	fs.BoolVar(&f.yes, "yes", false, "write to the external cluster of --endpoints (keys under /etcdbench/<run-id>/, deleted afterwards)")
	fs.StringVarP(&f.output, "output", "o", "text", "report format: "+strings.Join(formats, ", "))
	fs.BoolVar(&f.noProgress, "no-progress", false, "no live progress line on stderr")
	fs.IntVar(&f.conns, "conns", d.Conns, "gRPC connections; connection i talks to endpoint i mod n (see --target)")
	fs.IntVar(&f.clients, "clients", d.Clients, "concurrent clients, spread over the connections")
	fs.StringVar(&f.target, "target", d.Target, "which members the connections talk to: all (spread over the endpoints) or leader (all to the current leader)")
	fs.Int64Var(&f.total, "total", d.Total, fmt.Sprintf("requests to send (default %d unless --duration is given)", d.Total))
	fs.StringVar(&f.duration, "duration", "", "run this long (e.g. 30s); with --total, whichever comes first")
	fs.Float64Var(&f.rate, "rate", d.Rate, "requests per second over all clients: an open loop whose latencies count from each request's due time; 0: closed loop")
	fs.IntVar(&f.keySize, "key-size", d.KeySize, "key bytes after the /etcdbench/<run-id>/ prefix")
	fs.IntVar(&f.valSize, "val-size", d.ValSize, "value bytes")
	fs.IntVar(&f.keySpaceSize, "key-space-size", d.KeySpaceSize, "distinct keys")
	fs.BoolVar(&f.sequentialKeys, "sequential-keys", false, "use keys in order instead of at random")
	switch op {
	case etcdload.OpRange:
		fs.StringVar(&f.consistency, "consistency", d.Consistency, "l (linearizable) or s (serializable)")
	case etcdload.OpMixed:
		fs.StringVar(&f.consistency, "consistency", d.Consistency, "ranges: l (linearizable) or s (serializable)")
		fs.Float64Var(&f.readRatio, "read-ratio", d.ReadRatio, "share of ranges among the requests, 0 (puts only) to 1 (ranges only)")
	case etcdload.OpTxn:
		fs.IntVar(&f.txnOps, "txn-ops", d.TxnOps, "puts per transaction (of consecutive keys: at most --key-space-size)")
	case etcdload.OpWatch:
		fs.IntVar(&f.streams, "streams", d.Streams, "gRPC watch streams, spread over the connections")
		fs.IntVar(&f.watchers, "watchers-per-stream", d.WatchersPerStream, "watchers on each stream, each watching every key of the run")
	}
	fs.BoolVar(&f.compact, "compact-after", false, "compact the key history after the load (on a shared cluster this drops every key's older revisions)")
	fs.BoolVar(&f.defrag, "defrag-after", false, "defragment each endpoint's member after the load (blocks that member while it runs)")
	fs.IntVar(&f.members, "members", 1, "embedded etcd members: 1 or 3")
	fs.Uint64Var(&f.snapshotCount, "snapshot-count", 0, "embedded etcd's --snapshot-count (default: etcd's)")
	fs.StringVar(&f.heartbeat, "heartbeat-interval", "", "embedded etcd's --heartbeat-interval: milliseconds as etcd's flag (100) or a duration (100ms) (default: etcd's)")
	fs.StringVar(&f.election, "election-timeout", "", "embedded etcd's --election-timeout: milliseconds as etcd's flag (1000) or a duration (1s) (default: etcd's)")
	fs.StringVar(&f.quotaBackendBytes, "quota-backend-bytes", "", "embedded etcd's --quota-backend-bytes, e.g. 2g (default: etcd's)")
	fs.StringVar(&f.batchInterval, "backend-batch-interval", "", "embedded etcd's --backend-batch-interval, e.g. 100ms (default: etcd's)")
	fs.IntVar(&f.batchLimit, "backend-batch-limit", 0, "embedded etcd's --backend-batch-limit (default: etcd's)")
	f.security.register(fs)
}

// etcdSpec is one validated `etcd put|range` run.
type etcdSpec struct {
	load     etcdload.Load
	embedded etcdcluster.Options // used when load.Client.Endpoints is empty
	after    etcdload.Maintenance
	dir      string
	output   string
	args     []string
	progress io.Writer // a terminal for the live line, or nil
	// bench runs the load (nil: etcdload.Bench); etcd check judges it too.
	bench func(context.Context, etcdload.Load, etcdload.BenchOptions) (*etcdload.Outcome, error)
	space int64  // free space the embedded etcd needs (0: embeddedSpace)
	name  string // the progress line's name for the run (empty: the load's)
}

// resolve checks the flags and builds the run.
func (f *etcdFlags) resolve(cmd *cobra.Command, op etcdload.Op) (etcdSpec, error) {
	s := etcdSpec{dir: f.dir, output: f.output, args: redactArgs(commandLine(cmd))}
	external := len(f.endpoints) > 0
	if err := checkFormat("--output", f.output); err != nil {
		return s, err
	}
	switch {
	case external && cmd.Flags().Changed("dir"):
		return s, usagef("--dir and --endpoints are alternatives: --dir starts an embedded etcd there, --endpoints uses a running cluster")
	case !external && f.dir == "":
		return s, usagef("--dir is required (the directory on the disk to test, e.g. --dir /var/lib/etcd), or --endpoints for a running cluster")
	case f.members != 1 && f.members != 3:
		return s, usagef("--members %d: want 1 or 3", f.members)
	}
	l := etcdload.DefaultLoad(op)
	l.Client.Endpoints = f.endpoints
	l.Conns, l.Clients, l.Rate, l.Target = f.conns, f.clients, f.rate, f.target
	l.KeySize, l.ValSize, l.KeySpaceSize, l.SequentialKeys = f.keySize, f.valSize, f.keySpaceSize, f.sequentialKeys
	switch op {
	case etcdload.OpRange:
		l.Consistency = f.consistency
	case etcdload.OpMixed:
		l.Consistency, l.ReadRatio = f.consistency, f.readRatio
	case etcdload.OpTxn:
		l.TxnOps = f.txnOps
	case etcdload.OpWatch:
		l.Streams, l.WatchersPerStream = f.streams, f.watchers
	}
	s.after = etcdload.Maintenance{Compact: f.compact, Defrag: f.defrag}
	l.Total = f.total
	if f.duration != "" {
		d, err := units.ParseDuration(f.duration)
		if err != nil || d <= 0 {
			return s, usagef("--duration %q: want a positive duration such as 30s", f.duration)
		}
		l.Duration = d
		if !cmd.Flags().Changed("total") {
			l.Total = 0
		}
	}
	l.RunID = etcdload.NewRunID()
	if !external {
		// Validate needs endpoints; the embedded ones are known only later.
		l.Client.Endpoints = []string{"http://127.0.0.1:0"}
	}
	if err := l.Validate(); err != nil {
		return s, usageError{err}
	}
	if !external {
		l.Client.Endpoints = nil
	}
	opts, err := f.embedOptions()
	if err != nil {
		return s, err
	}
	s.embedded = opts
	if external && !f.yes {
		return s, usagef("not writing to %s without --yes: this run sends %s under %s (deleted afterwards)",
			strings.Join(f.endpoints, ","), plan(l), l.Prefix())
	}
	sec, eps, err := f.security.resolve(cmd, l.Client.Endpoints, os.Stdin, cmd.ErrOrStderr())
	if err != nil {
		return s, err
	}
	l.Client.Endpoints = eps
	l.Client.TLS, l.Client.Username, l.Client.Password = sec.tls, sec.user, sec.password
	s.load = l
	return s, nil
}

// plan says in words what a load writes.
func plan(l etcdload.Load) string {
	n := "requests"
	switch {
	case l.Total > 0 && l.Duration > 0:
		n = fmt.Sprintf("up to %d requests in up to %v", l.Total, l.Duration)
	case l.Total > 0:
		n = fmt.Sprintf("%d requests", l.Total)
	default:
		n = fmt.Sprintf("requests for %v", l.Duration)
	}
	switch l.Op {
	case etcdload.OpRange:
		return fmt.Sprintf("%s of ranges over %d keys of %d-byte values that it writes first", n, l.KeySpaceSize, l.ValSize)
	case etcdload.OpMixed:
		return fmt.Sprintf("%s, %.0f %% ranges and the rest puts, over %d keys of %d-byte values that it writes first", n, 100*l.ReadRatio, l.KeySpaceSize, l.ValSize)
	case etcdload.OpTxn:
		return fmt.Sprintf("%s of transactions of %d puts each over %d keys of %d-byte values", n, l.TxnOps, l.KeySpaceSize, l.ValSize)
	case etcdload.OpWatch:
		return fmt.Sprintf("%s of puts over %d keys of %d-byte values, watched by %d watchers", n, l.KeySpaceSize, l.ValSize, l.Streams*l.WatchersPerStream)
	}
	return fmt.Sprintf("%s of puts over %d keys of %d-byte values", n, l.KeySpaceSize, l.ValSize)
}

// embedOptions turns the embedded etcd's flags into Options.
func (f *etcdFlags) embedOptions() (etcdcluster.Options, error) {
	o := etcdcluster.Options{Members: f.members, SnapshotCount: f.snapshotCount, BackendBatchLimit: f.batchLimit}
	// etcd's own --heartbeat-interval and --election-timeout are
	// milliseconds: a bare number here is too.
	for _, d := range []struct {
		flag, val string
		dst       *time.Duration
		parse     func(string) (time.Duration, error)
		want      string
	}{
		{"heartbeat-interval", f.heartbeat, &o.HeartbeatInterval, units.ParseMillis, "milliseconds such as 100 or 100ms"},
		{"election-timeout", f.election, &o.ElectionTimeout, units.ParseMillis, "milliseconds such as 1000 or 1s"},
		{"backend-batch-interval", f.batchInterval, &o.BackendBatchInterval, units.ParseDuration, "a positive duration such as 100ms"},
	} {
		if d.val == "" {
			continue
		}
		v, err := d.parse(d.val)
		if err != nil || v <= 0 {
			return o, usagef("--%s %q: want %s", d.flag, d.val, d.want)
		}
		*d.dst = v
	}
	if f.quotaBackendBytes != "" {
		q, err := units.ParseSize(f.quotaBackendBytes)
		if err != nil || q <= 0 {
			return o, usagef("--quota-backend-bytes %q: want a size such as 2g", f.quotaBackendBytes)
		}
		o.QuotaBackendBytes = q
	}
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

// startEmbedded starts the embedded etcd of every command, each member
// in a process of its own, as deployed: sharing the load generator's Go
// runtime, etcd's WAL syncs would wait for CPU behind the clients (see
// docs/check.md, Prediction).
func startEmbedded(ctx context.Context, o etcdcluster.Options) (*etcdcluster.Cluster, error) {
	o.OwnProcess = true
	return etcdcluster.Start(ctx, o)
}

// embeddedSpace is the free space an embedded run needs: two 64 MB WAL
// segments per member (the current one and the preallocated next) plus
// a bbolt file and slack.
func embeddedSpace(members int) int64 { return int64(members) * (2*64e6 + 64<<20) }

// runEtcd runs the load and prints the report after the scratch directory
// is gone, as runDisk does.
func runEtcd(ctx context.Context, s etcdSpec, stdout io.Writer) error {
	res, err := measureEtcd(ctx, s)
	return conclude(ctx, stdout, s.output, res, err)
}

// measureEtcd starts the embedded etcd when there are no endpoints, runs
// the load with its metrics scraped around it, and stops and removes
// everything before it returns.
func measureEtcd(ctx context.Context, s etcdSpec) (res *result.Result, err error) {
	res = newResult(s.args)

	bo := etcdload.BenchOptions{Thresholds: verdict.Defaults(), HTTP: etcdload.HTTPClient(s.load.Client.TLS), After: s.after}
	var notes []string
	var cluster *etcdcluster.Cluster
	if len(s.load.Client.Endpoints) == 0 {
		// No := with err in this block: the deferred removal must set the
		// function's own err.
		need := s.space
		if need == 0 {
			need = embeddedSpace(s.embedded.Members)
		}
		dir, sd, stale, oerr := openScratch(s.dir, need, "free some space for the embedded etcd")
		if oerr != nil {
			return nil, oerr
		}
		defer func() {
			if rerr := sd.Remove(); rerr != nil && err == nil {
				err = rerr
			}
		}()
		for _, p := range stale {
			notes = append(notes, "removed a scratch directory left by a killed run: "+p)
		}
		res.Environment = sysinfo.Collect("/", dir)
		s.embedded.Dir = sd.Path
		var cerr error
		if cluster, cerr = startEmbedded(ctx, s.embedded); cerr != nil {
			return nil, cerr
		}
		defer func() {
			// Stopping is bounded (see Cluster.Close); a member that had to
			// be stopped the hard way is worth a note, not a failed run.
			if cerr := cluster.Close(); cerr != nil && res != nil && len(res.Workloads) > 0 {
				w := &res.Workloads[len(res.Workloads)-1]
				w.Notes = append(w.Notes, cerr.Error())
			}
		}()
		s.load.Client.Endpoints = cluster.Endpoints()
		bo.Targets = etcdload.EmbeddedTargets(cluster.MetricsURLs())
		notes = append(notes, fmt.Sprintf("embedded etcd: %d member(s) with data in %s", s.embedded.Members, sd.Path))
	} else {
		res.Environment = sysinfo.Collect("/", ".")
		notes = append(notes, "external cluster: the environment describes the machine etcdbench ran on, not the members")
		bo.Targets, bo.BestEffort = etcdload.ExternalTargets(s.load.Client.Endpoints), true
	}
	if w := s.progress; w != nil {
		name := s.load.Name()
		if s.name != "" {
			name = s.name
		}
		s.load.OnSecond = func(el time.Duration, sent int64) {
			fmt.Fprintf(w, "\r\033[K%s %4.0fs  %d requests sent", name, el.Seconds(), sent)
		}
	}
	bench := etcdload.Bench
	if s.bench != nil {
		bench = s.bench
	}
	out, runErr := bench(ctx, s.load, bo)
	if s.progress != nil {
		fmt.Fprint(s.progress, "\r\033[K")
	}
	interrupted := ctx.Err() != nil && runErr != nil
	if runErr != nil && out == nil {
		return nil, runErr
	}
	// A run ended by an error (a full quota, a user who may not write)
	// still reports what it did before; the error is the exit's.
	out.Workload.Notes = append(notes, out.Workload.Notes...)
	if cluster != nil && wentWrong(out.Workload) {
		out.Workload.Notes = append(out.Workload.Notes, logNotes(cluster.Log())...)
	}
	res.Workloads = []result.Workload{out.Workload}
	res.Interrupted = interrupted
	res.Finish(time.Now().UTC())
	return res, runErr
}

// wentWrong reports whether a load had failed requests or a verdict that
// is not PASS: then the embedded etcd's log goes into the result.
func wentWrong(w result.Workload) bool {
	if f := w.Figure("failed_requests"); f != nil && f.Value > 0 {
		return true
	}
	for _, v := range w.Verdicts {
		if v.Status != verdict.Pass {
			return true
		}
	}
	return false
}

// logLines is how many of the embedded etcd's last log lines a result
// keeps.
const logLines = 20

// logNotes turns the end of etcd's log (warnings and errors) into notes.
func logNotes(log string) []string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return []string{"etcd log: nothing at warn level or above"}
	}
	if len(lines) > logLines {
		lines = lines[len(lines)-logLines:]
	}
	out := []string{fmt.Sprintf("etcd log, the last %d lines at warn level and above:", len(lines))}
	for _, l := range lines {
		out = append(out, "etcd log: "+l)
	}
	return out
}

func newEtcdCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Load a real etcd (embedded on --dir, or --endpoints) and read its own disk metrics",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown etcd workload %q: want put, range, txn, watch, mixed or check", args[0])
			}
			return nil
		},
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(*cobra.Command, []string) error {
			return usagef("missing workload: etcdbench etcd put|range|txn|watch|mixed|check")
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, op := range etcdload.Ops {
		cmd.AddCommand(newEtcdLoadCmd(op, stdout, stderr))
	}
	cmd.AddCommand(newEtcdCheckCmd(stdout, stderr))
	return cmd
}

// loadWhat says in a few words what each load sends.
var loadWhat = map[etcdload.Op]string{
	etcdload.OpPut:   "puts",
	etcdload.OpRange: "ranges",
	etcdload.OpTxn:   "transactions of --txn-ops puts",
	etcdload.OpWatch: "puts that --streams x --watchers-per-stream watchers of the run's keys receive as events (latency: from each put's due time to each event)",
	etcdload.OpMixed: "ranges and puts (--read-ratio ranges)",
}

// newEtcdLoadCmd makes `etcd put`, `range`, `txn`, `watch` or `mixed`.
func newEtcdLoadCmd(op etcdload.Op, stdout, stderr io.Writer) *cobra.Command {
	f := &etcdFlags{}
	what := loadWhat[op]
	cmd := &cobra.Command{
		Use:   string(op) + " --dir DIR | --endpoints URLS --yes",
		Short: "etcd " + what + " like etcd's benchmark tool, with etcd's WAL fsync and backend commit histograms judged",
		Long: `Sends ` + what + ` to an etcd and reports throughput, latency percentiles, errors
by kind and a per-second series. With --dir, an embedded etcd (1 or 3 members)
runs with its data in a scratch directory inside DIR, removed afterwards, and
its own /metrics are read before and after the load: the WAL fsync and
backend commit p99 of the load are judged against etcd's limits. Every key is
under /etcdbench/<run-id>/, which must be empty and is deleted afterwards,
also on errors and Ctrl-C.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.resolve(cmd, op)
			if err != nil {
				return err
			}
			if showProgress(stderr, f.noProgress, f.output) {
				s.progress = stderr
			}
			return runEtcd(cmd.Context(), s, stdout)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	f.register(cmd.Flags(), op)
	return cmd
}
