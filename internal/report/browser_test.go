package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/result"
)

// chromiumFlags start a headless Chromium that cannot reach any network:
// every connection goes to a dead proxy and every name fails to resolve,
// so a page that needed a CDN or a web font would show it (and log it).
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
	"--enable-logging=stderr", "--v=0", "--hide-scrollbars",
}

// chromium runs the browser on a file URL with extra flags and returns its
// standard output and error.
func chromium(t *testing.T, page string, extra ...string) (stdout, stderr string) {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("no headless browser: install the Debian package chromium to run the browser test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(append(append([]string(nil), chromiumFlags...), "--user-data-dir="+t.TempDir()), extra...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+page)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, e.String())
	}
	return o.String(), e.String()
}

// consoleErrors returns the lines of Chromium's log that report a page's
// console message, an uncaught exception, or a blocked load.
func consoleErrors(log string) []string {
	var bad []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") || strings.Contains(l, "Refused to") || strings.Contains(l, "net::ERR_") {
			bad = append(bad, l)
		}
	}
	return bad
}

func TestBrowserConsoleDetectionWorks(t *testing.T) {
	page := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><script>console.error("deliberate"); undefinedCall();</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, log := chromium(t, page, "--dump-dom")
	if len(consoleErrors(log)) == 0 {
		t.Fatalf("a page with a console error and an exception gave a clean log; the browser test could not see errors:\n%s", log)
	}
}

// TestBrowserRendersReports opens generated reports from file URLs in a
// headless Chromium without network, takes a screenshot and the DOM, and
// checks that nothing was logged and every chart has drawn marks.
func TestBrowserRendersReports(t *testing.T) {
	dir := t.TempDir()
	if d := os.Getenv("ETCDBENCH_SCREENSHOTS"); d != "" {
		dir = d // keep the screenshots to look at
	}
	cmp, err := NewComparison([]*result.Result{readFixture(t, "disk-wal.json"), readFixture(t, "disk-wal-4m.json")}, []string{"disk-wal.json", "disk-wal-4m.json"})
	if err != nil {
		t.Fatal(err)
	}
	pages := []struct {
		name   string
		render func(*bytes.Buffer) error
		charts int
	}{
		{"wal-stall", func(b *bytes.Buffer) error { return HTML(b, sampleWithStall(t)) }, 4},
		{"disk-wal", func(b *bytes.Buffer) error { return HTML(b, readFixture(t, "disk-wal.json")) }, 6},
		{"etcd-put", func(b *bytes.Buffer) error { return HTML(b, readFixture(t, "etcd-put.json")) }, 5},
		{"trace-series", func(b *bytes.Buffer) error { return HTML(b, traceSample(t)) }, 10},
		{"disk-all", func(b *bytes.Buffer) error { return HTML(b, readFixture(t, "disk-all-quick.json")) }, 20},
		{"compare", func(b *bytes.Buffer) error { return CompareHTML(b, cmp) }, 2},
		{"diagnose-data", func(b *bytes.Buffer) error { return HTML(b, readFixture(t, "diagnose-data.json")) }, 1},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := p.render(&b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, p.name+".html")
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			shot := filepath.Join(dir, p.name+".png")
			_, log := chromium(t, path, "--window-size=1024,3000", "--screenshot="+shot)
			if bad := consoleErrors(log); len(bad) > 0 {
				t.Errorf("console messages while rendering:\n%s", strings.Join(bad, "\n"))
			}
			checkScreenshot(t, shot)
			// A phone-sized window renders too.
			if _, log := chromium(t, path, "--window-size=390,844", "--screenshot="+filepath.Join(dir, p.name+"-phone.png")); len(consoleErrors(log)) > 0 {
				t.Errorf("console messages at phone size:\n%s", strings.Join(consoleErrors(log), "\n"))
			}
			dom, log := chromium(t, path, "--dump-dom")
			if bad := consoleErrors(log); len(bad) > 0 {
				t.Errorf("console messages while dumping the DOM:\n%s", strings.Join(bad, "\n"))
			}
			checkDOMCharts(t, dom, p.charts)
		})
	}
}

// checkScreenshot decodes the PNG and requires more than a blank page.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	colors := map[[3]uint32]bool{}
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y += 7 {
		for x := bnd.Min.X; x < bnd.Max.X; x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colors[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	if len(colors) < 20 {
		t.Errorf("screenshot %s has %d colours: the page looks blank", path, len(colors))
	}
}

var (
	svgRe      = regexp.MustCompile(`(?s)<svg[^>]*class="chart"[^>]*>(.*?)</svg>`)
	drawnRe    = regexp.MustCompile(`<polyline class="series" points="[0-9]|<rect class="bar" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="[0-9.]*[1-9]`)
	svgTitleRe = regexp.MustCompile(`<title>([^<]*)</title>`)
)

// checkDOMCharts requires at least want charts in the DOM the browser
// built, each with drawn marks (a polyline with points or a bar with
// height), axes and a title.
func checkDOMCharts(t *testing.T, dom string, want int) {
	t.Helper()
	charts := svgRe.FindAllStringSubmatch(dom, -1)
	if len(charts) < want {
		t.Fatalf("%d charts in the DOM, want at least %d", len(charts), want)
	}
	for _, c := range charts {
		title := "untitled"
		if m := svgTitleRe.FindStringSubmatch(c[1]); m != nil {
			title = m[1]
		}
		if !drawnRe.MatchString(c[1]) {
			t.Errorf("chart %q is empty", title)
		}
		if strings.Count(c[1], "<text") < 4 {
			t.Errorf("chart %q has no axis labels", title)
		}
	}
}
