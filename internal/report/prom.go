package report

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

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
// client_golang's registry checks the families and writes the format.
func Prom(w io.Writer, rs ...*result.Result) error {
	g, err := promGatherer(rs...)
	if err != nil {
		return err
	}
	mfs, err := g.Gather()
	if err != nil {
		return err
	}
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	return nil
}

// promGatherer registers rs's series in a registry of their own.
func promGatherer(rs ...*result.Result) (prometheus.Gatherer, error) {
	var p promSet
	for _, r := range rs {
		p.add(r)
	}
	if p.err != nil {
		return nil, p.err
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(&p); err != nil {
		return nil, err
	}
	return reg, nil
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

// OneTextfileEach refuses results (read from sources) that would be
// written to the same textfile (the same command on the same
// directory): the later would replace the earlier, and one exposition
// cannot hold both.
func OneTextfileEach(rs []*result.Result, sources []string) error {
	seen := map[string]string{}
	for i, r := range rs {
		name := PromFileName(r)
		if first, ok := seen[name]; ok {
			return fmt.Errorf("--textfile: %s and %s would both be written to %s (the same command on the same directory): give one of them", first, sources[i], name)
		}
		seen[name] = sources[i]
	}
	return nil
}

// WriteTextfile writes r into dir as PromFileName(r), through a temporary
// file renamed into place (client_golang's WriteToTextfile), so that
// node_exporter never reads a half-written file. It returns the path
// written.
func WriteTextfile(dir string, r *result.Result) (string, error) {
	path := filepath.Join(dir, PromFileName(r))
	g, err := promGatherer(r)
	if err != nil {
		return "", err
	}
	if err := prometheus.WriteToTextfile(path, g); err != nil {
		return "", fmt.Errorf("writing the textfile %s: %w (is --textfile a writable directory?)", path, err)
	}
	return path, nil
}

// promSeries is one series: its labels (name, value pairs) and value; a
// summary's quantiles, sum and count instead for a summary.
type promSeries struct {
	labels    []string
	value     float64
	quantiles map[float64]float64
	sum       float64
	count     uint64
}

type promFamily struct {
	name, help string
	typ        prometheus.ValueType // 0: a summary
	series     []*promSeries
	byLabels   map[string]*promSeries
}

// promSet gathers series by family, in the order they are added; it is
// the prometheus.Collector the registry reads.
type promSet struct {
	families []*promFamily
	byName   map[string]*promFamily
	err      error
}

func (p *promSet) family(name string, typ prometheus.ValueType, help string) *promFamily {
	if p.byName == nil {
		p.byName = map[string]*promFamily{}
	}
	f := p.byName[name]
	if f == nil {
		f = &promFamily{name: name, help: help, typ: typ, byLabels: map[string]*promSeries{}}
		p.byName[name] = f
		p.families = append(p.families, f)
	}
	return f
}

// series returns f's series of labels, new unless a summary adds to it;
// two results that give one gauge series are an error that says what to
// do.
func (p *promSet) series(f *promFamily, labels []string, again bool) *promSeries {
	key := strings.Join(labels, "\x00")
	if s := f.byLabels[key]; s != nil {
		if !again && p.err == nil {
			p.err = fmt.Errorf("two results give the same series %s%v; render results of different commands or workloads together, or one at a time", f.name, labels)
		}
		return s
	}
	s := &promSeries{labels: append([]string(nil), labels...)}
	f.byLabels[key] = s
	f.series = append(f.series, s)
	return s
}

func (p *promSet) gauge(name, help string, value float64, labels ...string) {
	p.series(p.family(name, prometheus.GaugeValue, help), labels, false).value = value
}

// Describe sends no descriptions: the set is an unchecked collector,
// whose families are known only once the results are read.
func (p *promSet) Describe(chan<- *prometheus.Desc) {}

// Collect sends every series as a constant metric.
func (p *promSet) Collect(ch chan<- prometheus.Metric) {
	for _, f := range p.families {
		for _, s := range f.series {
			var names, values []string
			for i := 0; i+1 < len(s.labels); i += 2 {
				names, values = append(names, s.labels[i]), append(values, s.labels[i+1])
			}
			d := prometheus.NewDesc(f.name, f.help, names, nil)
			if f.typ == 0 {
				ch <- prometheus.MustNewConstSummary(d, s.count, s.sum, s.quantiles, values...)
				continue
			}
			ch <- prometheus.MustNewConstMetric(d, f.typ, s.value, values...)
		}
	}
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
		s := p.series(p.family("etcdbench_latency_seconds", 0, "Latency of one timed operation, from the full histogram."), ol, false)
		s.quantiles = map[float64]float64{}
		for _, pc := range l.Percentiles {
			s.quantiles[pc.P/100] = float64(pc.ValueNs) / 1e9
		}
		s.sum, s.count = l.MeanNs*float64(l.Count)/1e9, uint64(max(l.Count, 0))
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
