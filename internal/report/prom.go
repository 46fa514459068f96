package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// Prom writes results in the Prometheus text exposition format, as read by
// node_exporter's textfile collector. Every series carries a command label
// ("disk wal", "etcd put", "judge") so that the files of several periodic
// runs can sit side by side in one textfile directory; and a dir label,
// the directory under test. Names and units
// follow the Prometheus conventions (base units: seconds, bytes; ratios
// 0..1; unit as the name's suffix) and are documented in docs/reports.md.
func Prom(w io.Writer, rs ...*result.Result) error {
	var p promSet
	for _, r := range rs {
		p.add(r)
	}
	if p.err != nil {
		return p.err
	}
	ew := &errWriter{w: w}
	for _, f := range p.families {
		ew.printf("# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		for _, s := range f.samples {
			ew.printf("%s%s %s\n", s.name, s.labels, promFloat(s.value))
		}
	}
	return ew.err
}

// PromFileName is the textfile-collector file a result is written to in
// a --textfile directory: one per command and directory under test
// (etcdbench_disk_wal_var_lib_etcd.prom), so that periodic runs of several
// commands, or of one command on several disks, do not overwrite each other.
func PromFileName(r *result.Result) string {
	name := "etcdbench_" + strings.ReplaceAll(promCommand(r), " ", "_")
	if d := promSlug(r.Environment.Dir); d != "" {
		name += "_" + d
	}
	return name + ".prom"
}

// promSlug keeps the letters and digits of s, one underscore for each run
// of anything else.
func promSlug(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			under = false
		} else {
			under = true
		}
	}
	return b.String()
}

// WriteTextfile writes r into dir as PromFileName(r), through a temporary
// file renamed into place, so that node_exporter never reads a half-written
// file. It returns the path written.
func WriteTextfile(dir string, r *result.Result) (string, error) {
	path := filepath.Join(dir, PromFileName(r))
	// node_exporter reads only *.prom files, so the temporary name is ignored.
	f, err := os.CreateTemp(dir, ".etcdbench-*.prom.tmp")
	if err != nil {
		return "", fmt.Errorf("writing the textfile: %w (is --textfile a writable directory?)", err)
	}
	tmp := f.Name()
	err = Prom(f, r)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

type promSample struct {
	name, labels string
	value        float64
}

type promFamily struct {
	name, help, typ string
	samples         []promSample
	seen            map[string]bool
}

// promSet gathers samples by family, so that each family's HELP and TYPE
// come once with all its samples, whatever the order they are added in.
type promSet struct {
	families []*promFamily
	byName   map[string]*promFamily
	err      error
}

func (p *promSet) family(name, typ, help string) *promFamily {
	if p.byName == nil {
		p.byName = map[string]*promFamily{}
	}
	f := p.byName[name]
	if f == nil {
		f = &promFamily{name: name, help: help, typ: typ, seen: map[string]bool{}}
		p.byName[name] = f
		p.families = append(p.families, f)
	}
	return f
}

// sample adds one sample; suffix is "_sum" or "_count" for summaries.
func (p *promSet) sample(f *promFamily, suffix string, value float64, labels ...string) {
	ls := promLabels(labels)
	key := suffix + ls
	if f.seen[key] && p.err == nil {
		p.err = fmt.Errorf("two results give the same series %s%s%s; render results of different commands or workloads together, or one at a time", f.name, suffix, ls)
	}
	f.seen[key] = true
	f.samples = append(f.samples, promSample{name: f.name + suffix, labels: ls, value: value})
}

func (p *promSet) gauge(name, help string, value float64, labels ...string) {
	p.sample(p.family(name, "gauge", help), "", value, labels...)
}

func (p *promSet) add(r *result.Result) {
	// Every series names the command and the directory under test, so the
	// files of several periodic runs never repeat a series.
	cmd := []string{"command", promCommand(r), "dir", r.Environment.Dir}
	p.gauge("etcdbench_info", "Which etcdbench produced the result (always 1).", 1,
		append(cmd, "version", r.Tool.Version, "go_version", r.Tool.GoVersion)...)
	if !r.FinishedAt.IsZero() {
		p.gauge("etcdbench_last_run_timestamp_seconds", "When the run finished, in seconds since the Unix epoch: alert when it is too old.", float64(r.FinishedAt.UnixNano())/1e9, cmd...)
	}
	if !r.StartedAt.IsZero() && r.FinishedAt.After(r.StartedAt) {
		p.gauge("etcdbench_run_duration_seconds", "How long the whole run took.", r.FinishedAt.Sub(r.StartedAt).Seconds(), cmd...)
	}
	p.gauge("etcdbench_interrupted", "1 when a signal stopped the run before its verdicts.", promBool(r.Interrupted), cmd...)
	for _, s := range []verdict.Status{verdict.Pass, verdict.Warn, verdict.Fail} {
		p.gauge("etcdbench_status", "The run's worst verdict: 1 for the status it has, 0 for the others (none is 1 for an interrupted run).",
			promBool(r.Status != nil && *r.Status == s), append(cmd, "status", strings.ToLower(s.String()))...)
	}
	for i := range r.Workloads {
		p.addWorkload(cmd, &r.Workloads[i])
	}
}

func (p *promSet) addWorkload(cmd []string, wl *result.Workload) {
	wlb := append(append([]string(nil), cmd...), "workload", wl.Name)
	p.gauge("etcdbench_workload_operations", "Operations the workload's timed loop completed.", float64(wl.Ops), wlb...)
	p.gauge("etcdbench_workload_duration_seconds", "Length of the workload's timed loop.", float64(wl.DurationNs)/1e9, wlb...)
	p.gauge("etcdbench_workload_operations_per_second", "Operations per second of the timed loop (wal: write+fdatasync cycles, the sequential synced IOPS; etcd loads: requests).", wl.OpsPerSec, wlb...)
	p.gauge("etcdbench_workload_bytes_per_second", "Bytes per second of the timed loop.", wl.BytesPerSec, wlb...)
	for _, l := range wl.Latencies {
		ol := append(append([]string(nil), wlb...), "operation", l.Name)
		f := p.family("etcdbench_latency_seconds", "summary", "Latency of one timed operation, from the full histogram.")
		for _, pc := range l.Percentiles {
			p.sample(f, "", float64(pc.ValueNs)/1e9, append(ol, "quantile", strconv.FormatFloat(pc.P/100, 'g', 6, 64))...)
		}
		p.sample(f, "_sum", l.MeanNs*float64(l.Count)/1e9, ol...)
		p.sample(f, "_count", float64(l.Count), ol...)
		p.gauge("etcdbench_latency_max_seconds", "Slowest operation of the run.", float64(l.MaxNs)/1e9, ol...)
		if e := l.Exceedance; e != nil {
			p.gauge("etcdbench_latency_threshold_seconds", "The latency threshold the operation is judged against.", float64(e.ThresholdNs)/1e9, ol...)
			p.gauge("etcdbench_latency_over_threshold_ratio", "Fraction of operations slower than the threshold (0..1).", e.Fraction, ol...)
		}
		if ci := l.P99CI; ci != nil {
			p.gauge("etcdbench_latency_p99_lower_seconds", "Lower end of the p99's confidence interval.", float64(ci.LowerNs)/1e9, ol...)
			p.gauge("etcdbench_latency_p99_upper_seconds", "Upper end of the p99's confidence interval (the largest sample when it is open).", float64(ci.UpperNs)/1e9, ol...)
		}
	}
	for _, fg := range wl.Figures {
		name, scale, help := promFigure(fg.Unit)
		p.gauge(name, help, fg.Value*scale, append(append([]string(nil), wlb...), "figure", fg.Name)...)
	}
	for _, v := range wl.Verdicts {
		vl := append(append([]string(nil), wlb...), "check", v.Check)
		for _, s := range []verdict.Status{verdict.Pass, verdict.Warn, verdict.Fail} {
			p.gauge("etcdbench_verdict", "One verdict's status: 1 for the status it has, 0 for the others.",
				promBool(v.Status == s), append(vl, "status", strings.ToLower(s.String()))...)
		}
		if v.Confidence != nil {
			p.gauge("etcdbench_verdict_decided", "1 when the data settle the verdict at its confidence level, 0 when the run ended first.", promBool(v.Confidence.Decided), vl...)
		}
	}
}

// promFigure maps a figure's unit to a metric name in base units and the
// factor that converts the value into it.
func promFigure(unit string) (name string, scale float64, help string) {
	switch unit {
	case "s":
		return "etcdbench_figure_seconds", 1, "A workload's other results measured in seconds (figure names them)."
	case "B":
		return "etcdbench_figure_bytes", 1, "A workload's other results measured in bytes."
	case "B/s":
		return "etcdbench_figure_bytes_per_second", 1, "A workload's other results measured in bytes per second."
	case "ops/s":
		return "etcdbench_figure_operations_per_second", 1, "A workload's other results measured in operations per second."
	case "ratio", "x":
		return "etcdbench_figure_ratio", 1, "A workload's other results that are ratios (1 = equal, 0.5 = half)."
	case "%":
		return "etcdbench_figure_ratio", 0.01, "A workload's other results that are ratios (1 = equal, 0.5 = half)."
	}
	return "etcdbench_figure", 1, "A workload's other results that are counts."
}

// promCommand names the command that produced r: "disk wal", "etcd put",
// "judge"; "default" for the bare etcdbench.
func promCommand(r *result.Result) string {
	if len(r.Tool.Args) == 0 {
		return "unknown"
	}
	words := strings.Fields(r.Tool.Args[0])
	if len(words) > 0 && (words[0] == "etcdbench" || strings.HasSuffix(words[0], "/etcdbench")) {
		words = words[1:]
	}
	var keep []string
	for _, w := range words {
		if strings.HasPrefix(w, "-") {
			break
		}
		keep = append(keep, w)
	}
	if len(keep) == 0 {
		return "default"
	}
	return strings.Join(keep, " ")
}

func promLabels(kv []string) string {
	if len(kv) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(promEscape(kv[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var promEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func promEscape(s string) string { return promEscaper.Replace(s) }

func promFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func promBool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// sortedKeys returns m's keys in order, for stable output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
