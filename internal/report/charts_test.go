package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
)

// steadySeries is n seconds of 1000 operations each, then a last second
// with lastOps.
func steadySeries(n int, lastOps int64) []stats.SecondSample {
	var s []stats.SecondSample
	for t := 1; t <= n; t++ {
		s = append(s, stats.SecondSample{T: t, Ops: 1000, P99Ns: 400_000, MaxNs: 900_000})
	}
	return append(s, stats.SecondSample{T: n + 1, Ops: lastOps, P99Ns: 500_000, MaxNs: 500_000})
}

// The last second of a series is usually cut short by the end of the run:
// it is drawn for the time it covers when the duration tells that time,
// left out when that time is too short, and a stall only when whole.
func TestPartialLastSecond(t *testing.T) {
	for _, tc := range []struct {
		name       string
		lastOps    int64
		duration   time.Duration // 0: not recorded
		wantBars   int
		wantWidth  float64 // of the last bar, in seconds
		wantHeight float64 // of the last bar, per second
		wantStall  bool    // the last second is shaded
		wantNote   string
	}{
		{name: "half a second, drawn at its rate", lastOps: 500, duration: 3500 * time.Millisecond,
			wantBars: 4, wantWidth: 0.5, wantHeight: 1000, wantNote: "paler last bar covers only the run's last 500ms"},
		{name: "a sliver, left out", lastOps: 20, duration: 3050 * time.Millisecond,
			wantBars: 3, wantWidth: 1, wantHeight: 1000, wantNote: "last 50ms, part of a second, is not drawn"},
		{name: "whole and nearly empty: a stall", lastOps: 20, duration: 4 * time.Second,
			wantBars: 4, wantWidth: 1, wantHeight: 20, wantStall: true, wantNote: "stalled"},
		{name: "duration not recorded: no stall", lastOps: 20,
			wantBars: 4, wantWidth: 1, wantHeight: 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := &result.Workload{Name: "wal", Ops: 3000 + tc.lastOps, DurationNs: int64(tc.duration), OpsPerSec: 1000, Series: steadySeries(3, tc.lastOps)}
			ts := newTimeSeries(wl.Series, wl.DurationNs, "the workload")
			c := rateOverTimeChart("rate", wl, ts)
			if len(c.bars) != tc.wantBars {
				t.Fatalf("%d bars, want %d", len(c.bars), tc.wantBars)
			}
			last := c.bars[len(c.bars)-1]
			if w := last.x1 - last.x0; !near(w, tc.wantWidth) || !near(last.y, tc.wantHeight) {
				t.Errorf("last bar %.3f s wide and %.1f/s high, want %.3f s and %.1f/s", w, last.y, tc.wantWidth, tc.wantHeight)
			}
			if last.faint != (tc.wantWidth < 1) {
				t.Errorf("last bar faint=%v for a width of %.3f s", last.faint, tc.wantWidth)
			}
			stalled := false
			for _, b := range stalls(ts) {
				stalled = stalled || b[1] == 4
			}
			if stalled != tc.wantStall {
				t.Errorf("last second a stall: %v, want %v", stalled, tc.wantStall)
			}
			if !strings.Contains(c.note, tc.wantNote) || (tc.wantNote == "") != (c.note == "") {
				t.Errorf("caption %q, want one with %q", c.note, tc.wantNote)
			}
			lat := latencyOverTimeChart("lat", "latency", ts, 0)
			end := lat.lines[0].points[len(lat.lines[0].points)-1][0]
			if want := float64(len(c.bars)-1) + tc.wantWidth/2; !near(end, want) {
				t.Errorf("latency line ends at %.3f s, want the middle of the last drawn second, %.3f s", end, want)
			}
			if want := tc.duration.Seconds(); want > 0 && !near(c.x.max, want) {
				t.Errorf("time axis ends at %.3f s, not at the run's end, %.3f s", c.x.max, want)
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// traceSample is a traced etcd: the WAL's syncs are the workload's series,
// the db and snapshot syncs have series of their own.
func traceSample(t *testing.T) *result.Result {
	r := sample(t)
	wl := &r.Workloads[0]
	wl.Name, wl.Description, wl.Parameters = "trace", "syncs of an etcd, timed in the kernel", map[string]any{"pid": 4242}
	wl.DurationNs = int64(5500 * time.Millisecond)
	wl.Verdicts, wl.Notes = nil, nil
	wl.Latencies[0].Name = "wal sync"
	wl.Series = steadySeries(5, 500)
	other := func(name string, ops ...int64) result.Latency {
		h := stats.NewLatencyHistogram()
		var s []stats.SecondSample
		for i, n := range ops {
			x := stats.SecondSample{T: i + 1, Ops: n}
			for k := int64(0); k < n; k++ {
				d := time.Duration(2+k%5) * time.Millisecond
				stats.Record(h, d)
				x.P99Ns, x.MaxNs = max(x.P99Ns, int64(d)), max(x.MaxNs, int64(d))
			}
			s = append(s, x)
		}
		enc, err := stats.Encode(h)
		if err != nil {
			t.Fatal(err)
		}
		return result.Latency{Name: name, Summary: stats.Summarize(h), Histogram: enc, Series: s}
	}
	// db syncs every second but the third; one snapshot sync in all.
	wl.Latencies = append(wl.Latencies, other("db sync", 10, 10, 0, 10, 10, 5), other("snap sync", 0, 1, 0, 0, 0, 0))
	r.Tool.Args = []string{"etcdbench trace", "--pid=4242", "--duration=5.5s"}
	r.Finish(r.StartedAt.Add(6 * time.Second))
	return r
}

// A latency with a series of its own gets a latency-over-time chart of
// its own, with its stalls shaded when it happens every second and no
// threshold unless one judges it.
func TestLatencySeriesCharts(t *testing.T) {
	r := traceSample(t)
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "trace-series.html", b.Bytes())
	charts := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<svg[^>]*id="([^"]*)"[^>]*>(.*?)</svg>`).FindAllStringSubmatch(b.String(), -1) {
		charts[m[1]] = m[2]
	}
	for _, tc := range []struct {
		id, title string
		stalls    int
	}{
		{"c0-trace-latency-time", "wal sync latency per second", 0},
		{"c0-trace-db-sync-time", "db sync latency per second", 1},
		{"c0-trace-snap-sync-time", "snap sync latency per second", 0}, // most seconds have none: not stalls
	} {
		t.Run(tc.id, func(t *testing.T) {
			c, ok := charts[tc.id]
			if !ok {
				t.Fatalf("no chart %s among %d", tc.id, len(charts))
			}
			if !strings.Contains(c, "<title>"+tc.title+"</title>") {
				t.Errorf("chart is not titled %q", tc.title)
			}
			if n := strings.Count(c, `class="stall"`); n != tc.stalls {
				t.Errorf("%d stalls shaded, want %d", n, tc.stalls)
			}
			if tc.id != "c0-trace-latency-time" && strings.Contains(c, "threshold") {
				t.Error("a threshold on a latency nothing judges")
			}
		})
	}
	if _, ok := charts["c0-trace-wal-sync-time"]; ok {
		t.Error("the first latency's series is drawn twice")
	}
}

func TestMemberLabel(t *testing.T) {
	for _, tc := range []struct{ prefix, want string }{
		{"member0", "member 0"},
		{"member12", "member 12"},
		{"members", "all members together"},
		{"memberx", "memberx"},
		{"etcd-a", "etcd-a"},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			if got := memberLabel(tc.prefix); got != tc.want {
				t.Errorf("memberLabel(%q) = %q, want %q", tc.prefix, got, tc.want)
			}
		})
	}
}

// One member's chart says which member it shows, in its title and under
// its bars.
func TestMembersChartNamesTheOnlyMember(t *testing.T) {
	wl := &result.Workload{Figures: []result.Figure{
		{Name: "member0_wal_fsync_p99", Value: 0.002, Unit: "s"},
		{Name: "member0_backend_commit_p99", Value: 0.004, Unit: "s"},
	}}
	c := membersChart("m", wl)
	if c.title != "own p99s of member 0 (/metrics)" || len(c.x.tickText) != 1 || c.x.tickText[0] != "member 0" {
		t.Errorf("title %q, groups %q", c.title, c.x.tickText)
	}
	wl.Figures = append(wl.Figures, result.Figure{Name: "member1_wal_fsync_p99", Value: 0.003, Unit: "s"})
	if c := membersChart("m", wl); c.title != "members' own p99s (/metrics)" || strings.Join(c.x.tickText, ",") != "member 0,member 1" {
		t.Errorf("title %q, groups %q", c.title, c.x.tickText)
	}
}

var (
	titleLineRe = regexp.MustCompile(`<text x="\d+" y="(\d+)" font-size="14" font-weight="600"[^>]*>([^<]*)</text>`)
	legendRe    = regexp.MustCompile(`<g class="legend"><line[^>]*/><text x="[0-9.]+" y="(\d+)"[^>]*>([^<]*)</text></g>`)
	viewBoxRe   = regexp.MustCompile(`viewBox="0 0 (\d+) (\d+)"`)
)

// A title too long for one line wraps, the chart grows by the lines it
// adds, and the legend stays on a row of its own below the title.
func TestChartTitleWrapsAboveTheLegend(t *testing.T) {
	for _, title := range []string{
		"short title",
		"wal-under-load: background-commit latency CDF",
		"wal-under-load: background-commit-while-compacting latency CDF over the whole run",
	} {
		t.Run(title, func(t *testing.T) {
			c := &chart{id: "x", title: title, x: axis{min: 0, max: 1, format: fmtSeconds}, y: axis{min: 0, max: 1, format: fmtCount}}
			for _, n := range []string{"A", "B", "C"} {
				c.lines = append(c.lines, line{name: n, color: "#000", points: [][2]float64{{0, 0}, {1, 1}}})
			}
			svg := c.svg()
			lines := titleLineRe.FindAllStringSubmatch(svg, -1)
			var text []string
			lastY := 0
			for _, l := range lines {
				if n := len([]rune(l[2])); n > titleChars && strings.Contains(l[2], " ") {
					t.Errorf("title line %q is longer than %d characters", l[2], titleChars)
				}
				text = append(text, l[2])
				lastY, _ = strconv.Atoi(l[1])
			}
			if strings.Join(text, " ") != title {
				t.Errorf("title lines %q do not make the title", text)
			}
			vb := viewBoxRe.FindStringSubmatch(svg)
			if h, _ := strconv.Atoi(vb[2]); h != chartH+titleLineH*(len(lines)-1) {
				t.Errorf("%d title lines in a chart %d high", len(lines), h)
			}
			legends := legendRe.FindAllStringSubmatch(svg, -1)
			if len(legends) != 3 {
				t.Fatalf("%d legend entries, want 3", len(legends))
			}
			for _, l := range legends {
				// 13px legend text rises about 10 above its baseline.
				if y, _ := strconv.Atoi(l[1]); y-10 <= lastY {
					t.Errorf("legend %q at y=%d runs into the title's last line at y=%d", l[2], y, lastY)
				}
			}
		})
	}
}

// With few samples the CDF still reaches 99.9 %, so the p99 line and its
// label are not in the top corner.
func TestCDFKeepsP99OffTheTopEdge(t *testing.T) {
	for _, n := range []int{1, 30, 100, 100_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h := stats.NewLatencyHistogram()
			for i := 0; i < n; i++ {
				stats.Record(h, time.Duration(1+i%50)*time.Millisecond)
			}
			c := cdfChart("cdf", "commit latency CDF", []cdfCurve{{name: "commit", h: h}}, 0)
			if c.y.max <= 2 {
				t.Fatalf("the y axis ends at %v nines: p99 is its top edge", c.y.max)
			}
			m := regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)"[^>]*>p99</text>`).FindStringSubmatch(c.svg())
			if m == nil {
				t.Fatal("no p99 label")
			}
			x, _ := strconv.ParseFloat(m[1], 64)
			y, _ := strconv.ParseFloat(m[2], 64)
			if x < plotW/2 || y < 14 {
				t.Errorf("p99 label at (%v, %v), in the plot's top-left corner", x, y)
			}
		})
	}
}

// The rate chart's mean is named in the legend, not written over the bars.
func TestRateMeanLabelIsInTheLegend(t *testing.T) {
	wl := &result.Workload{Name: "etcd-put", OpsPerSec: 1000, DurationNs: int64(4 * time.Second), Series: steadySeries(3, 1000)}
	svg := rateOverTimeChart("rate", wl, newTimeSeries(wl.Series, wl.DurationNs, "the workload")).svg()
	if n := strings.Count(svg, "mean 1000/s"); n != 1 {
		t.Fatalf("mean label %d times", n)
	}
	legends := legendRe.FindAllStringSubmatch(svg, -1)
	if len(legends) != 1 || legends[0][2] != "mean 1000/s" {
		t.Errorf("legend %q, want the mean", legends)
	}
}

// One operation is not "1 operations".
func TestOperationsWords(t *testing.T) {
	for n, want := range map[int64]string{0: "0 operations", 1: "1 operation", 2: "2 operations"} {
		if got := operations(n); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}
