package report

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

//go:embed assets/report.html assets/report.css
var assets embed.FS

// page is the template's view of one report.
type page struct {
	Title, Subtitle, Status string
	CSS                     template.CSS
	Multi                   bool
	Verdicts                []htmlVerdict
	Command                 []string // the command line: its path, then each argument shell-quoted
	Workloads               []htmlWorkload
	Compare                 template.HTML
	Env                     [][2]string
	EnvNotes                []string
	Footer                  string
}

type htmlVerdict struct {
	Status, Workload, Anchor, Title, Value, Limit, Decided, Detail, Source string
}

type htmlChart struct {
	SVG  template.HTML
	Note string
}

type htmlWorkload struct {
	Name, Anchor, Description, Summary, StopMode, StopReason string
	Latencies                                                [][]string
	Confidence                                               []string
	Charts                                                   []htmlChart
	Figures                                                  [][3]string
	Tables                                                   []htmlTable
	Facts, Notes                                             []string
	Params                                                   [][2]string
}

// htmlTable is a workload's table of its own kind (a capacity sweep's
// device cost and volume budgets).
type htmlTable struct {
	Title string
	Head  []string
	Rows  [][]string
	Note  string
}

var pageTemplate = template.Must(template.ParseFS(assets, "assets/report.html"))

func css() template.CSS {
	b, err := assets.ReadFile("assets/report.css")
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	return template.CSS(b)
}

// HTML writes r as one self-contained HTML page: the verdicts first, the
// command line that reproduces the run, per workload the latency table and
// charts (inline SVG: CDF with the threshold, histogram, per-second latency
// and rate with the stalls shaded, etcd members' own latencies), and the
// environment. It loads nothing from the network and needs no script.
func HTML(w io.Writer, r *result.Result) error {
	p := page{CSS: css(), Multi: len(r.Workloads) > 1, Command: commandWords(r.Tool.Args)}
	p.Status = statusText(r)
	p.Title = "etcdbench " + promCommand(r)
	if p.Title == "etcdbench default" {
		p.Title = "etcdbench"
	}
	p.Subtitle = subtitle(r)
	p.Verdicts = htmlVerdicts(r.Workloads)
	drilled := false
	for i := range r.Workloads {
		hw, err := htmlWorkloadOf(i, &r.Workloads[i])
		if err != nil {
			return err
		}
		if r.Workloads[i].Drill != nil && !drilled { // the faults side by side, once
			drilled = true
			hw.Facts = append([]string{drillHeadline(r.Workloads)}, hw.Facts...)
			hw.Tables = append([]htmlTable{{Title: "every fault, as clients saw it (medians over the rounds)", Head: drillHead, Rows: drillRows(r.Workloads)}}, hw.Tables...)
		}
		p.Workloads = append(p.Workloads, hw)
	}
	p.Env, p.EnvNotes = htmlEnvironment(r)
	p.Footer = fmt.Sprintf("etcdbench %s (%s), result schema %s", r.Tool.Version, r.Tool.GoVersion, r.Schema)
	return executePage(w, &p)
}

func executePage(w io.Writer, p *page) error {
	if err := pageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("writing HTML: %w", err)
	}
	return nil
}

func statusText(r *result.Result) string {
	if r.Status == nil {
		return "INTERRUPTED"
	}
	return r.Status.String()
}

func subtitle(r *result.Result) string {
	parts := []string{}
	if !r.StartedAt.IsZero() {
		parts = append(parts, r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if r.Environment.Hostname != "" {
		parts = append(parts, "on "+r.Environment.Hostname)
	}
	if r.Environment.Dir != "" {
		parts = append(parts, "in "+r.Environment.Dir)
	}
	if !r.StartedAt.IsZero() && r.FinishedAt.After(r.StartedAt) {
		parts = append(parts, "took "+units.FormatDuration(r.FinishedAt.Sub(r.StartedAt)))
	}
	if r.Interrupted {
		parts = append(parts, "interrupted before its verdicts")
	}
	return strings.Join(parts, ", ")
}

// htmlVerdicts lists every verdict, worst first, keeping the workloads'
// order among equals.
func htmlVerdicts(wls []result.Workload) []htmlVerdict {
	type row struct {
		wl int
		v  verdict.Verdict
	}
	var rows []row
	for i, wl := range wls {
		for _, v := range wl.Verdicts {
			rows = append(rows, row{i, v})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return worseFirst(rows[i].v, rows[j].v) })
	var out []htmlVerdict
	for _, r := range rows {
		v := r.v
		dec := ""
		switch c := v.Confidence; {
		case c == nil:
		case c.Level == 0:
			dec = c.Method
		case c.Decided:
			dec = fmt.Sprintf("decided at %.0f %%", 100*c.Level)
		default:
			dec = fmt.Sprintf("NOT decided at %.0f %%", 100*c.Level)
		}
		out = append(out, htmlVerdict{
			Status: v.Status.String(), Workload: wls[r.wl].Name, Anchor: anchor(r.wl, wls[r.wl].Name),
			Title: v.Title, Value: units.FormatValue(v.Value, v.Unit), Limit: v.LimitText(),
			Decided: dec, Detail: v.Detail, Source: v.Source,
		})
	}
	return out
}

func anchor(i int, name string) string { return fmt.Sprintf("%d-%s", i, slug(name)) }

func htmlWorkloadOf(i int, wl *result.Workload) (htmlWorkload, error) {
	hw := htmlWorkload{
		Name: wl.Name, Anchor: anchor(i, wl.Name), Description: wl.Description,
		StopMode: wl.Stop.Mode, StopReason: wl.Stop.Reason, Notes: wl.Notes,
	}
	hw.Summary = workloadSummary(wl)
	if wl.Engine != "" {
		hw.Summary = strings.TrimPrefix(hw.Summary+", engine "+wl.Engine, ", ")
	}
	for _, l := range wl.Latencies {
		row := []string{l.Name, fmt.Sprint(l.Count)}
		for _, p := range []float64{50, 90, 99, 99.9} {
			v, _ := l.At(p)
			row = append(row, units.FormatDuration(time.Duration(v)))
		}
		row = append(row, units.FormatDuration(time.Duration(l.MaxNs)), units.FormatDuration(time.Duration(l.MeanNs)))
		hw.Latencies = append(hw.Latencies, row)
		if l.P99CI != nil {
			upper := units.FormatDuration(time.Duration(l.P99CI.UpperNs))
			if l.P99CI.UpperOpen {
				upper = "≥" + upper + " (too few samples above p99)"
			}
			hw.Confidence = append(hw.Confidence, fmt.Sprintf("%s p99 %.0f %% confidence interval: %s .. %s", l.Name, 100*l.P99CI.Level, units.FormatDuration(time.Duration(l.P99CI.LowerNs)), upper))
		}
		if e := l.Exceedance; e != nil {
			hw.Confidence = append(hw.Confidence, fmt.Sprintf("%s above %s: %d of %d (%.3f %%), %.0f %% CI %.3f %% .. %.3f %%, design effect %.2f",
				l.Name, units.FormatDuration(time.Duration(e.ThresholdNs)), e.Count, l.Count, 100*e.Fraction, 100*e.Interval.Level, 100*e.Interval.Lower, 100*e.Interval.Upper, e.DesignEffect))
		}
	}
	charts, err := workloadCharts("c"+anchor(i, wl.Name), wl)
	if err != nil {
		return hw, err
	}
	for _, c := range charts {
		hw.Charts = append(hw.Charts, htmlChart{SVG: template.HTML(c.svg()), Note: c.note}) // #nosec: svg() escapes every string it embeds
	}
	if c := wl.Capacity; c != nil {
		hw.Tables = capacityTables(c)
	}
	if d := wl.Drill; d != nil {
		if c := drillTimelineChart("c"+anchor(i, wl.Name)+"-timeline", d); c != nil {
			hw.Charts = append([]htmlChart{{SVG: template.HTML(c.svg()), Note: c.note}}, hw.Charts...) // #nosec: svg() escapes every string it embeds
		}
		hw.Tables = append(hw.Tables, drillRunTable(d))
	}
	if d := wl.Data; d != nil {
		hw.Tables = dataTables(d)
		hw.Facts = append(hw.Facts, dataLines(d)...)
	}
	for _, f := range wl.Figures {
		hw.Figures = append(hw.Figures, [3]string{f.Name, units.FormatValue(f.Value, f.Unit), f.Description})
	}
	if d := wl.Device; d != nil {
		hw.Facts = append(hw.Facts, fmt.Sprintf("device %s: busy %.0f %%, %.1f I/Os queued on average, %d reads, %d writes, %d flushes, %s written, average wait %s",
			d.Name, 100*d.Utilization, d.AvgQueue, d.ReadIOs, d.WriteIOs, d.FlushIOs, units.FormatBytes(d.WriteBytes), units.FormatDuration(time.Duration(d.AvgWaitNs))))
	}
	if p := wl.Process; p != nil {
		hw.Facts = append(hw.Facts, fmt.Sprintf("etcdbench CPU: user %s, system %s, %d voluntary and %d involuntary context switches",
			units.FormatDuration(time.Duration(p.UserNs)), units.FormatDuration(time.Duration(p.SystemNs)), p.VoluntarySwitches, p.InvoluntarySwitch))
	}
	for _, k := range sortedKeys(wl.Parameters) {
		hw.Params = append(hw.Params, [2]string{k, fmt.Sprint(wl.Parameters[k])})
	}
	return hw, nil
}

func htmlEnvironment(r *result.Result) ([][2]string, []string) {
	env := r.Environment
	fs := env.Filesystem
	fsText := fmt.Sprintf("%s on %s at %s (%s)", orUnknown(fs.Type), orUnknown(fs.Source), orUnknown(fs.MountPoint), fs.MountOptions)
	if fs.Type == "" && fs.Source == "" {
		fsText = notRecorded
	}
	sys := systemOf(env)
	rows := [][2]string{
		{"directory", orNotRecorded(env.Dir)},
		{"filesystem", fsText},
		{"device", deviceString(env)},
	}
	if env.Stack != nil {
		rows = append(rows, [2]string{"storage chain", stackString(env)})
	}
	rows = append(rows, [][2]string{
		{"kernel", sys.kernel},
		{"CPUs", sys.cpus},
		{"memory", sys.memory},
	}...)
	if env.Hostname != "" {
		rows = append(rows, [2]string{"host", env.Hostname})
	}
	rows = append(rows, [2]string{"etcdbench", fmt.Sprintf("%s (%s)", r.Tool.Version, r.Tool.GoVersion)})
	if !r.StartedAt.IsZero() {
		rows = append(rows, [2]string{"started", r.StartedAt.UTC().Format(time.RFC3339)})
	}
	return rows, env.Notes
}

// CommandLine turns a result's recorded args back into a command line a
// shell runs as is: the first element is the command path ("etcdbench disk
// wal"), the others are quoted where the shell would split or expand them.
func CommandLine(args []string) string { return strings.Join(commandWords(args), " ") }

// commandWords are CommandLine's words: the page sets each one apart, so
// that a narrow screen wraps the line between arguments, not inside one.
func commandWords(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	out := []string{args[0]}
	for _, a := range args[1:] {
		out = append(out, shellQuote(a))
	}
	return out
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=./:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
