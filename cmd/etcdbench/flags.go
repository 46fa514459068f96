package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/etcdproc"
	"etcdbench/internal/report"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// The flag groups every command that needs them registers, each defined
// once, so that a common flag has the same name, help and meaning on every
// command: the report format, the progress line, an etcd load's settings,
// the embedded etcd's settings, etcd's TLS files, --dir, --quick and
// --thorough, --wal-p99 and --confidence; and what several commands say
// the same way: the refusal to write to a cluster without --yes, the
// scheme given to endpoints without one, the choice of the etcd process
// of --pid. The root's --html and
// --textfile are persistent flags (reportFiles).

// outputFlags is -o/--output, the report format on stdout, and the
// formats a command offers: registered with the flag (formatsAnnotation),
// they are what its help lists, what check accepts and which of the root's
// report files the command writes (reportFilesAccepted).
type outputFlags struct {
	output  string
	formats []string
	noProm  string
}

// formatsAnnotation is the annotation of a command's -o/--output flag
// that lists the formats the command offers.
const formatsAnnotation = "etcdbench/formats"

// noPromAnnotation is the annotation of -o/--output that says why a
// command offers no prom (and so takes no --textfile).
const noPromAnnotation = "etcdbench/no-prom"

// register registers -o/--output offering every report format.
func (f *outputFlags) register(fs *pflag.FlagSet) { f.registerFormats(fs, report.Formats, "") }

// registerFormats registers -o/--output offering formats only; noProm,
// when prom is not among them, says why (the refusal of --textfile).
func (f *outputFlags) registerFormats(fs *pflag.FlagSet, formats []string, noProm string) {
	f.formats, f.noProm = formats, noProm
	fs.StringVarP(&f.output, "output", "o", "text", "report format: "+formatsUsage(formats))
	annotateFormats(fs, "output", formats, noProm)
}

// annotateFormats records on the flag name of fs the formats it offers.
func annotateFormats(fs *pflag.FlagSet, name string, formats []string, noProm string) {
	_ = fs.SetAnnotation(name, formatsAnnotation, formats) // the flag was just registered
	if noProm != "" {
		_ = fs.SetAnnotation(name, noPromAnnotation, []string{noProm})
	}
}

// formatsUsage describes formats in a flag's help, e.g. "text, json, html
// (self-contained, with charts) or prom (Prometheus text format)".
func formatsUsage(formats []string) string {
	var out []string
	for _, f := range formats {
		switch f {
		case "html":
			f += " (self-contained, with charts)"
		case "prom":
			f += " (Prometheus text format)"
		}
		out = append(out, f)
	}
	if len(out) < 2 {
		return strings.Join(out, "")
	}
	return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
}

// check rejects a format the command does not offer.
func (f *outputFlags) check() error {
	if f.output == "prom" && f.noProm != "" && !slices.Contains(f.formats, "prom") {
		return run.Usagef("--output prom: %s", f.noProm)
	}
	return checkFormat("--output", f.output, f.formats)
}

// progressFlags is --no-progress, for commands that draw a live line.
type progressFlags struct{ noProgress bool }

func (f *progressFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.noProgress, "no-progress", false, "no live progress line on stderr (it is shown only when stderr is a terminal and the report is text)")
}

// terminal is where the live line goes for a report in format output:
// stderr when it may, or nil.
func (f *progressFlags) terminal(stderr io.Writer, output string) io.Writer {
	return run.Terminal(stderr, f.noProgress, output)
}

// loadFlags are an etcd load's settings (etcdload.CommonParams and the
// Params of its kinds), each flag bound to a field of l; the loads'
// defaults are the flags' defaults.
type loadFlags struct {
	l        etcdload.Load
	duration string
	names    []string // the flags registered, for apply
}

// register registers the common settings and those of kinds (each name
// once) with defaults from d; durationUsage is the help of --duration,
// whose default is d.Duration when set.
func (f *loadFlags) register(fs *pflag.FlagSet, d etcdload.Load, kinds []etcdload.Kind, durationUsage string) {
	f.l = d
	for _, p := range etcdload.ParamsOf(kinds) {
		if fs.Lookup(p.Name) != nil {
			continue // consistency: range's and mixed's
		}
		switch v := p.Field(&f.l).(type) {
		case *int:
			fs.IntVar(v, p.Name, *v, p.Usage)
		case *int64:
			fs.Int64Var(v, p.Name, *v, p.Usage)
		case *float64:
			fs.Float64Var(v, p.Name, *v, p.Usage)
		case *string:
			fs.StringVar(v, p.Name, *v, p.Usage)
		case *bool:
			fs.BoolVar(v, p.Name, *v, p.Usage)
		default:
			panic(fmt.Sprintf("load setting %s: unknown field type %T", p.Name, v))
		}
		f.names = append(f.names, p.Name)
	}
	def := ""
	if d.Duration > 0 {
		def = d.Duration.String()
	}
	fs.StringVar(&f.duration, "duration", def, durationUsage)
}

// apply sets in l every setting given on the command line of cmd, and
// --duration (a given --duration without --total runs for the duration
// alone). A setting l's kind does not take is a usage error.
func (f *loadFlags) apply(cmd *cobra.Command, l *etcdload.Load) error {
	ch := cmd.Flags().Changed
	var given []string
	for _, n := range f.names {
		if ch(n) {
			given = append(given, n)
		}
	}
	if err := l.SetFrom(&f.l, given); err != nil {
		return run.Usage(err)
	}
	if f.duration == "" {
		return nil
	}
	d, err := units.ParseDuration(f.duration)
	if err != nil || d <= 0 {
		return run.Usagef("--duration %q: want a positive duration such as 30s", f.duration)
	}
	l.Duration = d
	if ch("duration") && !ch("total") {
		l.Total = 0
	}
	return nil
}

// tlsFlags are etcdctl's TLS flags: how to reach members that serve
// https.
type tlsFlags struct{ files etcdload.TLSFiles }

func (f *tlsFlags) register(fs *pflag.FlagSet) { f.files.Register(fs) }

// given says which TLS flags the command line of cmd gives.
func (f *tlsFlags) given(cmd *cobra.Command) []string {
	var out []string
	for _, n := range etcdload.TLSFlags {
		if cmd.Flags().Changed(n) {
			out = append(out, "--"+n)
		}
	}
	return out
}

// endpointClients are the members' URLs with their scheme (https when
// TLS flags are given), their client TLS configuration (nil without TLS
// flags) and the HTTP client that reads their /metrics with it, for a
// command's --endpoints (flag: the flag the URLs came from).
func (f *tlsFlags) endpointClients(cmd *cobra.Command, eps []string, flag string) ([]string, *tls.Config, *http.Client, error) {
	tlsGiven := len(f.given(cmd)) > 0
	eps, err := withScheme(eps, tlsGiven, flag)
	if err != nil || !tlsGiven {
		return eps, nil, etcdload.HTTPClient(nil), err
	}
	cfg, err := f.files.Config()
	if err != nil {
		return nil, nil, nil, run.Usage(err)
	}
	return eps, cfg, etcdload.HTTPClient(cfg), nil
}

// nonEmpty are the values of a list flag that are not empty (a trailing
// comma, --endpoints "").
func nonEmpty(vals []string) []string {
	var out []string
	for _, v := range vals {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// check rejects a certificate without its key and the reverse.
func (f *tlsFlags) check() error {
	if (f.files.Cert == "") != (f.files.Key == "") {
		return run.Usagef("--cert and --key go together: give both or neither")
	}
	return nil
}

// onlyEtcd is the pid of the only etcd process under root (procRoot), for
// a command with --pid: none or several is a usage error that says which
// of the command's flags to give (none: what to give when no etcd runs,
// e.g. "--pid PID").
func onlyEtcd(root, none string) (int, error) {
	pid, err := etcdproc.FindOne(root)
	var many *etcdproc.ManyError
	switch {
	case errors.Is(err, etcdproc.ErrNone):
		return 0, run.Usagef("%v; give %s", err, none)
	case errors.As(err, &many):
		return 0, run.Usagef("%v; choose one with --pid", err)
	}
	return pid, err
}

// dirFlag is --dir: the directory on the disk a command tests (clean:
// the directory it cleans).
type dirFlag struct{ path string }

// dirUsage is the help of --dir for the disk's workloads.
const dirUsage = "directory on the disk to test (etcd's --data-dir); a private scratch directory is created inside it and removed afterwards"

// dirWhat says what --dir is in the message of a missing one.
const dirWhat = "the directory on the disk to test, e.g. --dir /var/lib/etcd"

func (f *dirFlag) register(fs *pflag.FlagSet, def, usage string) {
	fs.StringVar(&f.path, "dir", def, usage)
}

// require is nil when --dir is given and not empty, else the usage error
// saying what the directory is (what) and, unless or is "", what the
// command takes instead.
func (f *dirFlag) require(what, or string) error {
	switch {
	case f.path != "":
		return nil
	case or == "":
		return run.Usagef("--dir is required: %s", what)
	}
	return run.Usagef("--dir is required (%s), or %s", what, or)
}

// speedFlags are --quick and --thorough: the short and the long preset
// (check's budget) instead of the default.
type speedFlags struct{ quick, thorough bool }

func (f *speedFlags) register(fs *pflag.FlagSet, quickUsage, thoroughUsage string) {
	fs.BoolVar(&f.quick, "quick", false, quickUsage)
	fs.BoolVar(&f.thorough, "thorough", false, thoroughUsage)
}

// name is the preset the flags choose: "quick", "thorough", or def when
// neither is given. Both, or one with the flag other (e.g. --preset)
// when otherGiven, is a usage error.
func (f *speedFlags) name(def, other string, otherGiven bool) (string, error) {
	if f.quick && f.thorough || (f.quick || f.thorough) && otherGiven {
		flags := "--quick and --thorough"
		if other != "" {
			flags = "--quick, --thorough and " + other
		}
		return "", run.Usagef("%s are alternatives: give at most one", flags)
	}
	switch {
	case f.quick:
		return "quick", nil
	case f.thorough:
		return "thorough", nil
	}
	return def, nil
}

// runLongerFlag is cmd's own flag for a longer run, which the advice of a
// verdict the run ended before deciding names: its cap on a run's or a
// step's time when it has one, else --thorough unless preset is already
// the thorough one; "" when it has none, and the advice names no flag.
func runLongerFlag(cmd *cobra.Command, preset string) string {
	for _, name := range []string{"runtime", "step-runtime"} {
		if cmd.Flags().Lookup(name) != nil {
			return "--" + name
		}
	}
	if cmd.Flags().Lookup("thorough") != nil && preset != "thorough" {
		return "--thorough"
	}
	return ""
}

// p99Flags are --wal-p99 and --confidence: the threshold of the WAL
// fdatasync p99 and how sure its verdict must be.
type p99Flags struct {
	walP99     string
	confidence float64
}

// defaultConfidence is the confidence of a p99 verdict unless
// --confidence says otherwise.
const defaultConfidence = 0.95

func (f *p99Flags) register(fs *pflag.FlagSet) {
	def := time.Duration(verdict.Defaults().WALFsyncP99.Limit * float64(time.Second))
	fs.StringVar(&f.walP99, "wal-p99", def.String(), "threshold for the fdatasync p99 (etcd FAQ: 10ms)")
	fs.Float64Var(&f.confidence, "confidence", defaultConfidence, "confidence of the p99 verdict, between 0 and 1")
}

// resolve checks both flags and returns the threshold; a --wal-p99 given
// on the command line (changed) overrides th's.
func (f *p99Flags) resolve(changed func(string) bool, th *verdict.Thresholds) (time.Duration, error) {
	p99, err := units.ParseDuration(f.walP99)
	if err != nil || p99 <= 0 {
		return 0, run.Usagef("--wal-p99 %q: want a positive duration such as 10ms", f.walP99)
	}
	if !(f.confidence > 0 && f.confidence < 1) {
		return 0, run.Usagef("--confidence must be between 0 and 1 (e.g. 0.95), got %v", f.confidence)
	}
	if changed("wal-p99") {
		th.WALFsyncP99.Override(p99.Seconds(), "--wal-p99")
	}
	return p99, nil
}

// refuseWrites is the refusal to write to the cluster of --endpoints
// without --yes; plan says what the run would write and what is deleted
// when.
// --yes without --endpoints is refused too: it consents to nothing (the
// embedded etcd under --dir is etcdbench's own), and a user who typed it
// may believe the run goes to a cluster.
func (f *etcdFlags) refuseWrites(plan string) error {
	switch {
	case len(f.endpoints) > 0 && !f.yes:
		return run.Usagef("not writing to %s without --yes: %s", strings.Join(f.endpoints, ","), plan)
	case len(f.endpoints) == 0 && f.yes:
		return run.Usagef("--yes applies to --endpoints only: without them the run loads its own embedded etcd under --dir")
	}
	return nil
}

// withScheme gives each URL without a scheme https:// when tls is set
// and http:// otherwise ("" stays ""), as observe.WithScheme does. With
// tls, a plain http:// URL is a usage error naming flag, where the URLs
// came from.
func withScheme(urls []string, tls bool, flag string) ([]string, error) {
	out, err := observe.WithScheme(urls, tls)
	if ph := (*observe.PlainHTTPError)(nil); errors.As(err, &ph) {
		return nil, run.Usagef("%s %s is plain HTTP but TLS flags are given: write https:// or drop the TLS flags", flag, ph.URL)
	}
	return out, err
}
