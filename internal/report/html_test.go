package report

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
)

// sampleWithStall is sample with a ten-second series in which second 6
// completed nothing, as a disk stall gives.
func sampleWithStall(t *testing.T) *result.Result {
	r := sample(t)
	wl := &r.Workloads[0]
	wl.Series = nil
	for s := 1; s <= 10; s++ {
		x := stats.SecondSample{T: s, Ops: 1000, P99Ns: 480000 + int64(s)*1000, MaxNs: 500000 + int64(s)*5000}
		switch s {
		case 6:
			x = stats.SecondSample{T: s}
		case 7:
			x.Ops, x.Exceed, x.MaxNs = 1, 1, int64(12*time.Millisecond)
		}
		wl.Series = append(wl.Series, x)
	}
	return r
}

// readFixture reads a result saved by the real binary (testdata/*.json).
func readFixture(t *testing.T, name string) *result.Result {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := result.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, sampleWithStall(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "wal.html", b.Bytes())
	s := b.String()
	for _, want := range []string{
		`<span class="badge PASS">PASS</span>`, "WAL fdatasync p99",
		`id="c0-wal-fdatasync-cdf"`, `id="c0-wal-fdatasync-hist"`, `id="c0-wal-latency-time"`, `id="c0-wal-rate-time"`,
		"10ms threshold", `class="stall"`, "(stall)", "virtio_blk",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	// The verdicts come before the charts.
	if strings.Index(s, `id="verdicts"`) > strings.Index(s, "<svg") {
		t.Error("verdict table is not at the top")
	}
}

// The page must not reach the network: no URL other than the SVG namespace
// and no script.
func TestHTMLIsSelfContained(t *testing.T) {
	for _, name := range []string{"disk-wal.json", "etcd-put.json", "disk-all-quick.json"} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := HTML(&b, readFixture(t, name)); err != nil {
				t.Fatal(err)
			}
			s := b.String()
			for _, u := range regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^"' )]*`).FindAllString(s, -1) {
				if u != "http://www.w3.org/2000/svg" {
					t.Errorf("external reference %q", u)
				}
			}
			for _, bad := range []string{"<script", "<link", "@import", "url(", "<img"} {
				if strings.Contains(s, bad) {
					t.Errorf("page contains %q", bad)
				}
			}
			if n := strings.Count(s, "<svg"); n < 3 {
				t.Errorf("only %d charts", n)
			}
		})
	}
}

// An etcd load's page: its throughput and latency series, and its
// members' own p99s. The fixture's run lasted 3 ms into its last second:
// that sliver is left out rather than drawn as a second's bar.
func TestHTMLOfEtcdRunGolden(t *testing.T) {
	r := readFixture(t, "etcd-put.json")
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "etcd-put.html", b.Bytes())
	s := b.String()
	for _, want := range []string{"requests per second (throughput)", "request latency per second", "own p99s of all members together", "WAL fsync p99 limit"} {
		if !strings.Contains(s, want) {
			t.Errorf("etcd report lacks %q", want)
		}
	}
	wl := r.Workloads[0]
	last := wl.Series[len(wl.Series)-1]
	partial := time.Duration(wl.DurationNs) - time.Duration(last.T-1)*time.Second
	if partial <= 0 || partial.Seconds() >= minPartialSecond {
		t.Fatalf("the fixture's last second lasts %v: not the short partial second this test is about", partial)
	}
	if strings.Contains(s, fmt.Sprintf("second %d: ", last.T)) {
		t.Errorf("the partial second %d is drawn as a bar", last.T)
	}
	if want := fmt.Sprintf("the run&#39;s last %s, part of a second, is not drawn", units.FormatDuration(partial)); !strings.Contains(s, want) {
		t.Errorf("no caption %q", want)
	}
	if strings.Contains(s, `class="stall"`) {
		t.Error("a stall is shaded in a run without one")
	}
}

// The reproduce line sets each argument apart, so a narrow screen wraps it
// between arguments, and still reads as the command line.
func TestHTMLCommandLineKeepsArgumentsWhole(t *testing.T) {
	r := sample(t)
	r.Tool.Args = append(r.Tool.Args, "--html=/tmp/a report.html", "--runtime=12s")
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<pre class="cmd">(.*?)</pre>`).FindStringSubmatch(b.String())
	if m == nil {
		t.Fatal("no command line")
	}
	spans := regexp.MustCompile(`<span>([^<]*)</span>`).FindAllStringSubmatch(m[1], -1)
	if len(spans) != len(r.Tool.Args) {
		t.Errorf("%d pieces for %d arguments: %s", len(spans), len(r.Tool.Args), m[1])
	}
	text := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[1], ""))
	if want := CommandLine(r.Tool.Args); text != want {
		t.Errorf("the command line reads\n%s\nnot\n%s", text, want)
	}
}

// Every polyline and bar lies inside its plot, whatever the data.
func TestChartsStayInsideThePlot(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, readFixture(t, "disk-all-quick.json")); err != nil {
		t.Fatal(err)
	}
	nums := regexp.MustCompile(`points="([^"]*)"`)
	for _, m := range nums.FindAllStringSubmatch(b.String(), -1) {
		for _, pt := range strings.Fields(m[1]) {
			var x, y float64
			if _, err := fmtSscan(pt, &x, &y); err != nil {
				t.Fatalf("point %q: %v", pt, err)
			}
			if x < 0 || x > plotW || y < 0 || y > plotH {
				t.Fatalf("point %q outside the %dx%d plot", pt, plotW, plotH)
			}
		}
	}
}

func TestCDFPointsAreMonotone(t *testing.T) {
	r := sample(t)
	h, err := stats.Decode(r.Workloads[0].Latencies[0].Histogram)
	if err != nil {
		t.Fatal(err)
	}
	pts := cdfPoints(h, 4)
	for i := 1; i < len(pts); i++ {
		if pts[i][0] < pts[i-1][0] || pts[i][1] < pts[i-1][1] {
			t.Fatalf("CDF goes back at %d: %v then %v", i, pts[i-1], pts[i])
		}
	}
	if last := pts[len(pts)-1]; last[0] != float64(h.Max()) {
		t.Fatalf("CDF ends at %v, not the max %d", last, h.Max())
	}
}

func TestCommandLineQuotes(t *testing.T) {
	got := CommandLine([]string{"etcdbench disk wal", "--dir=/var/lib/etcd", "--dir=/tmp/my dir", "--x=it's"})
	want := `etcdbench disk wal --dir=/var/lib/etcd '--dir=/tmp/my dir' '--x=it'\''s'`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	out, err := exec.Command("sh", "-c", "printf '%s\\n' "+strings.TrimPrefix(got, "etcdbench disk wal ")).Output()
	if err != nil || string(out) != "--dir=/var/lib/etcd\n--dir=/tmp/my dir\n--x=it's\n" {
		t.Fatalf("the shell reads it as %q (%v)", out, err)
	}
}

func fmtSscan(s string, x, y *float64) (int, error) {
	return fmt.Sscanf(s, "%g,%g", x, y)
}

// An interrupted run has measurements but no verdicts; it renders in every
// format and says so.
func TestInterruptedRunRenders(t *testing.T) {
	r := sampleWithStall(t)
	r.Interrupted = true
	r.Workloads[0].Verdicts = nil
	r.Finish(r.FinishedAt)
	var h, p bytes.Buffer
	if err := HTML(&h, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), `<span class="badge INTERRUPTED">INTERRUPTED</span>`) || strings.Contains(h.String(), `id="verdicts"`) {
		t.Error("interrupted run: no INTERRUPTED badge, or a verdict table without verdicts")
	}
	if err := Prom(&p, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.String(), `etcdbench_interrupted{command="default",dir="/var/lib/etcd"} 1`) || strings.Contains(p.String(), `status="pass"} 1`) {
		t.Errorf("interrupted run's metrics:\n%s", p.String())
	}
	promtool(t, p.Bytes())
	r.Workloads = nil // interrupted before the first workload finished
	if err := HTML(&bytes.Buffer{}, r); err != nil {
		t.Fatal(err)
	}
}
