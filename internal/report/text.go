package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// Text writes a compact report for a terminal: per workload the latency
// table, the confidence figures and the verdicts, then the environment.
func Text(w io.Writer, r *result.Result) error {
	ew := &errWriter{w: w}
	textDurabilityHeadline(ew, r.Workloads)
	textDrill(ew, r.Workloads)
	for i := range r.Workloads {
		textWorkload(ew, &r.Workloads[i])
	}
	if len(r.Workloads) > 1 {
		textVerdictTable(ew, r.Workloads)
	}
	textEnvironment(ew, r)
	if r.Status == nil {
		ew.printf("\nResult: INTERRUPTED (no verdict)\n")
	} else {
		ew.printf("\nResult: %s\n", *r.Status)
	}
	return ew.err
}

func textWorkload(ew *errWriter, wl *result.Workload) {
	ew.printf("%s: %s\n", wl.Name, wl.Description)
	if line := workloadSummary(wl); line != "" {
		ew.printf("  %s\n", line)
	}
	if wl.Engine != "" {
		ew.printf("  engine: %s\n", wl.Engine)
	}
	if wl.Stop.Mode != "" && wl.Stop.Mode != "none" {
		ew.printf("  stopped (%s mode): %s\n", wl.Stop.Mode, wl.Stop.Reason)
	}
	ew.printf("\n")

	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(wl.Latencies) > 0 {
		fmt.Fprintf(tw, "  latency\tp50\tp90\tp99\tp99.9\tmax\tmean\t\n")
	}
	for _, l := range wl.Latencies {
		row := []string{"  " + l.Name}
		for _, p := range []float64{50, 90, 99, 99.9} {
			v, _ := l.At(p)
			row = append(row, units.FormatDuration(time.Duration(v)))
		}
		row = append(row, units.FormatDuration(time.Duration(l.MaxNs)), units.FormatDuration(time.Duration(l.MeanNs)))
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
	for _, l := range wl.Latencies {
		if l.P99CI != nil {
			upper := units.FormatDuration(time.Duration(l.P99CI.UpperNs))
			if l.P99CI.UpperOpen {
				upper = "≥" + upper + " (too few samples above p99)"
			}
			ew.printf("  %s p99 %.0f %% confidence interval: %s .. %s\n", l.Name, 100*l.P99CI.Level, units.FormatDuration(time.Duration(l.P99CI.LowerNs)), upper)
		}
		if e := l.Exceedance; e != nil {
			ew.printf("  %s above %s: %d of %d (%.3f %%), %.0f %% CI %.3f %% .. %.3f %%, design effect %.2f\n",
				l.Name, units.FormatDuration(time.Duration(e.ThresholdNs)), e.Count, l.Count, 100*e.Fraction,
				100*e.Interval.Level, 100*e.Interval.Lower, 100*e.Interval.Upper, e.DesignEffect)
		}
	}
	width := 28 // the figures' names in one column, however long the longest
	for _, f := range wl.Figures {
		width = max(width, len(f.Name))
	}
	for _, f := range wl.Figures {
		ew.printf("  %-*s %-12s %s\n", width, f.Name, units.FormatValue(f.Value, f.Unit), f.Description)
	}
	if wl.Capacity != nil {
		textCapacity(ew, wl.Capacity)
	}
	if wl.Data != nil {
		textData(ew, wl.Data)
	}
	if d := wl.Device; d != nil {
		ew.printf("  device %s: busy %.0f %%, %.1f I/Os queued on average, %d reads, %d writes, %d flushes, %s written, average wait %s\n",
			d.Name, 100*d.Utilization, d.AvgQueue, d.ReadIOs, d.WriteIOs, d.FlushIOs, units.FormatBytes(d.WriteBytes), units.FormatDuration(time.Duration(d.AvgWaitNs)))
	}
	if p := wl.Process; p != nil {
		ew.printf("  etcdbench CPU: user %s, system %s, %d voluntary and %d involuntary context switches\n",
			units.FormatDuration(time.Duration(p.UserNs)), units.FormatDuration(time.Duration(p.SystemNs)), p.VoluntarySwitches, p.InvoluntarySwitch)
	}
	if len(wl.Verdicts) > 0 {
		ew.printf("\n")
	}
	for _, v := range wl.Verdicts {
		textVerdict(ew, v)
	}
	for _, n := range wl.Notes {
		ew.printf("  note: %s\n", n)
	}
	ew.printf("\n")
}

func textVerdict(ew *errWriter, v verdict.Verdict) {
	sure := ""
	if c := v.Confidence; c != nil {
		sure = ", " + c.Sure()
	}
	if v.Advisory {
		sure += "; counted as a WARN"
	}
	ew.printf("  %s  %s %s (limit %s%s)\n", v.Status, v.Title, units.FormatValue(v.Value, v.Unit), v.LimitText(), sure)
	ew.printf("        %s\n", v.Detail)
	ew.printf("        source: %s\n", v.Source)
}

// textVerdictTable lists every verdict of a multi-workload run, worst first.
func textVerdictTable(ew *errWriter, wls []result.Workload) {
	type row struct {
		wl string
		v  verdict.Verdict
	}
	var rows []row
	for _, wl := range wls {
		for _, v := range wl.Verdicts {
			rows = append(rows, row{wl.Name, v})
		}
	}
	if len(rows) == 0 { // e.g. interrupted before any: no empty table, as in HTML
		return
	}
	sort.SliceStable(rows, func(i, j int) bool { return worseFirst(rows[i].v, rows[j].v) })
	ew.printf("verdicts\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		sure := ""
		if c := r.v.Confidence; c != nil && !c.Decided {
			sure = " (not decided)"
		}
		if r.v.Advisory {
			sure += " (counted as a WARN)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s%s\n", r.v.Status, r.wl, r.v.Title, units.FormatValue(r.v.Value, r.v.Unit), r.v.LimitText(), sure)
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
	ew.printf("\n")
}

func textEnvironment(ew *errWriter, r *result.Result) {
	env := r.Environment
	fs := env.Filesystem
	ew.printf("environment\n")
	ew.printf("  dir         %s\n", orNotRecorded(env.Dir))
	if fs.Type == "" && fs.Source == "" {
		ew.printf("  filesystem  not recorded\n")
	} else {
		ew.printf("  filesystem  %s on %s at %s (%s)\n", orUnknown(fs.Type), orUnknown(fs.Source), orUnknown(fs.MountPoint), fs.MountOptions)
	}
	ew.printf("  device      %s\n", deviceString(env))
	if env.Stack != nil {
		ew.printf("  storage     %s\n", stackString(env))
	}
	sys := systemOf(env)
	cpus, memory := "CPUs "+sys.cpus, "memory "+sys.memory
	if env.CPUs > 0 {
		cpus = strings.TrimSpace(fmt.Sprintf("%d CPUs %s", env.CPUs, env.CPUModel))
	}
	if env.MemTotalBytes > 0 {
		memory = sys.memory + " memory"
	}
	ew.printf("  system      kernel %s, %s, %s\n", sys.kernel, cpus, memory)
	ew.printf("  etcdbench   %s (%s)\n", r.Tool.Version, r.Tool.GoVersion)
	for _, n := range env.Notes {
		ew.printf("  note: %s\n", n)
	}
}

// textDurabilityHeadline puts a FAIL that says writes are not made
// durable above every workload: the latencies below are fast because of it,
// and an operator reading from the top must meet that first.
func textDurabilityHeadline(ew *errWriter, wls []result.Workload) {
	for _, wl := range wls {
		for _, v := range wl.Verdicts {
			if verdict.IsDurabilityFailure(v) && v.Check == verdict.CheckMountFlushDisabled {
				ew.printf("FAIL  %s: %s (%s)\n      %s\n\n", wl.Name, v.Title, "fast because writes are not made durable", v.Detail)
				return
			}
		}
	}
}

// worseFirst orders verdicts by status, worst first, and among FAILs puts
// those that say writes are not durable before the rest.
func worseFirst(a, b verdict.Verdict) bool {
	if a.Status != b.Status {
		return a.Status > b.Status
	}
	return verdict.IsDurabilityFailure(a) && !verdict.IsDurabilityFailure(b)
}

// stackString is the chain below a stacked device, with why it stops
// short when it does.
func stackString(env sysinfo.Facts) string {
	s := env.Stack.Chain
	if env.Stack.Unresolved != "" {
		s += " (not followed further: " + env.Stack.Unresolved + ")"
	}
	for _, d := range env.Stack.Bottom {
		bottom := env
		bottom.Device = &d
		s += "; " + deviceString(bottom)
	}
	return s
}

// deviceString describes the block device behind the directory, "none"
// for a filesystem without one (tmpfs, overlay), or "not recorded" when the
// result has no filesystem facts at all (a judged fio run).
func deviceString(env sysinfo.Facts) string {
	d := env.Device
	if d == nil {
		if env.Filesystem.Type == "" && env.Filesystem.Source == "" {
			return notRecorded // no filesystem either: nothing was looked at
		}
		return "none (no block device behind this filesystem)"
	}
	parts := []string{d.Name}
	if d.Partition != "" {
		parts[0] = d.Partition + " on " + d.Name
	}
	if d.Model != "" {
		parts = append(parts, d.Model)
	}
	if d.Driver != "" {
		parts = append(parts, "driver "+d.Driver)
	}
	if d.Virtual {
		parts = append(parts, "virtual disk")
	}
	if d.Rotational != nil {
		if *d.Rotational {
			parts = append(parts, "rotational")
		} else {
			parts = append(parts, "non-rotational")
		}
	}
	if d.Scheduler != "" {
		parts = append(parts, "scheduler "+d.Scheduler)
	}
	if d.WriteCache != "" {
		parts = append(parts, "write cache "+d.WriteCache)
	}
	if len(d.Slaves) > 0 {
		parts = append(parts, "on "+strings.Join(d.Slaves, ", "))
	}
	return strings.Join(parts, ", ")
}

// system is the machine's facts as the reports print them, each "not
// recorded" when the result lacks it (a result judged from fio's output has
// no kernel, CPUs or memory): a zero would read as a measurement.
type system struct{ kernel, cpus, memory string }

func systemOf(env sysinfo.Facts) system {
	s := system{kernel: orNotRecorded(env.Kernel), cpus: notRecorded, memory: notRecorded}
	switch {
	case env.CPUs > 0:
		s.cpus = strings.TrimSpace(fmt.Sprintf("%d %s", env.CPUs, env.CPUModel))
	case env.CPUModel != "":
		s.cpus = "number not recorded (" + env.CPUModel + ")"
	}
	if env.MemTotalBytes > 0 {
		s.memory = units.FormatBytes(int64(env.MemTotalBytes))
	}
	return s
}

const notRecorded = "not recorded"

func orNotRecorded(s string) string {
	if s == "" {
		return notRecorded
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// errWriter keeps the first write error so the report code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// intParam reads a numeric parameter, whether it was set by a workload (an
// int) or read back from JSON (a float64).
func intParam(m map[string]any, key string) int64 {
	switch v := m[key].(type) {
	case int:
		return int64(v)
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}
