package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"etcdbench/internal/result"
)

// Results saved by the real binary, kept with the reporters' tests.
const (
	fixtureWAL    = "../../internal/report/testdata/disk-wal.json"
	fixtureWAL4m  = "../../internal/report/testdata/disk-wal-4m.json"
	fixtureEtcd   = "../../internal/report/testdata/etcd-put.json"
	fixtureDiskAl = "../../internal/report/testdata/disk-all-quick.json"
)

// checkPromtool runs promtool check metrics on text, when promtool exists.
func checkPromtool(t *testing.T, text []byte) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed (Debian package prometheus): exposition not linted")
		return
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestReportFormats(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		check func(t *testing.T, out string)
	}{
		{"text", []string{"report", fixtureWAL}, func(t *testing.T, out string) {
			if !strings.Contains(out, "Result: PASS") || !strings.Contains(out, "fdatasync") {
				t.Errorf("text report:\n%s", out)
			}
		}},
		{"json round trip", []string{"report", fixtureWAL, "--format", "json"}, func(t *testing.T, out string) {
			r, err := result.Read(strings.NewReader(out))
			if err != nil || len(r.Workloads) != 1 || r.Workloads[0].Ops == 0 {
				t.Errorf("json report does not read back: %v", err)
			}
		}},
		{"html", []string{"report", fixtureEtcd, "-f", "html"}, func(t *testing.T, out string) {
			if !strings.HasPrefix(out, "<!DOCTYPE html>") || strings.Count(out, "<svg") < 4 {
				t.Errorf("html report lacks charts")
			}
		}},
		{"prom of several results", []string{"report", fixtureWAL, fixtureEtcd, fixtureDiskAl, "--format", "prom"}, func(t *testing.T, out string) {
			for _, cmd := range []string{`command="disk wal"`, `command="etcd put"`, `command="disk all"`} {
				if !strings.Contains(out, cmd) {
					t.Errorf("exposition lacks %s", cmd)
				}
			}
			checkPromtool(t, []byte(out))
		}},
		{"text of several results", []string{"report", fixtureWAL, fixtureEtcd}, func(t *testing.T, out string) {
			if strings.Count(out, "Result: PASS") != 2 {
				t.Errorf("want two reports:\n%s", out)
			}
		}},
		{"-o is -f", []string{"report", fixtureWAL, "-o", "prom"}, func(t *testing.T, out string) {
			checkPromtool(t, []byte(out))
			if !strings.Contains(out, `command="disk wal"`) {
				t.Errorf("-o prom:\n%s", out)
			}
		}},
		{"json of several results is one array", []string{"report", fixtureWAL, fixtureEtcd, fixtureDiskAl, "--output", "json"}, func(t *testing.T, out string) {
			var docs []json.RawMessage
			if err := json.Unmarshal([]byte(out), &docs); err != nil || len(docs) != 3 {
				t.Fatalf("not one JSON array of three results (%v):\n%.300s", err, out)
			}
			for i, want := range []string{"etcdbench disk wal", "etcdbench etcd put", "etcdbench disk all"} {
				r, err := result.Read(bytes.NewReader(docs[i]))
				if err != nil || r.Tool.Args[0] != want {
					t.Errorf("element %d: %v, want a result of %s", i, err, want)
				}
			}
		}},
		{"html of several results", []string{"report", fixtureWAL, fixtureEtcd, "-f", "html"}, func(t *testing.T, out string) {
			checkHTMLPage(t, out)
			for i, src := range []string{fixtureWAL, fixtureEtcd} {
				sec := fmt.Sprintf(`<section class="result" id="r%d">`, i+1)
				if !strings.Contains(out, sec) || !strings.Contains(out, fmt.Sprintf(`id="r%d-verdicts"`, i+1)) || !strings.Contains(out, src) {
					t.Errorf("no section with the verdicts of %s", src)
				}
			}
			if strings.Count(out, "<svg") < 6 {
				t.Error("the page lacks the results' charts")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runBin(t, runOpts{}, c.args...)
			if res.code != exitOK || res.stderr != "" {
				t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
			}
			c.check(t, res.stdout)
		})
	}
}

// checkHTMLPage checks that s is one self-contained HTML page.
func checkHTMLPage(t *testing.T, s string) {
	t.Helper()
	if !strings.HasPrefix(s, "<!DOCTYPE html>") || strings.Count(s, "</html>") != 1 {
		t.Fatalf("not one HTML page:\n%.300s", s)
	}
	for _, bad := range []string{"<script", "<link", "@import", "url(http", "<img"} {
		if strings.Contains(s, bad) {
			t.Errorf("the page loads something: it contains %q", bad)
		}
	}
	if !strings.Contains(s, `default-src 'none'`) {
		t.Error("the page has no Content-Security-Policy")
	}
}

// --html with several results writes their page, through a temporary file.
func TestReportSeveralToHTMLFile(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "all.html")
	res := runBin(t, runOpts{}, "report", fixtureWAL, fixtureEtcd, "--html", html)
	if res.code != exitOK || strings.Count(res.stdout, "Result: PASS") != 2 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	checkHTMLPage(t, string(b))
	if !bytes.Contains(b, []byte(`id="r2-verdicts"`)) {
		t.Error("--html holds one result, want both")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d files, want the page alone (no temporary file left)", len(ents))
	}
}

func TestReportFilesFlags(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "wal.html")
	res := runBin(t, runOpts{}, "report", fixtureWAL, "--html", html, "--textfile", dir)
	if res.code != exitOK || !strings.Contains(res.stdout, "Result: PASS") {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Fatalf("--html wrote no report: %v", err)
	}
	prom, err := os.ReadFile(filepath.Join(dir, "etcdbench_disk_wal_tmp_fx.prom")) // the fixture ran on /tmp/fx
	if err != nil {
		t.Fatalf("--textfile wrote nothing: %v", err)
	}
	checkPromtool(t, prom)
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("the directory holds %d files, want the report and the metrics (no temporary file left)", len(ents))
	}
}

// A real run writes its --html and --textfile reports and prints prom.
func TestDiskWALWritesReportFiles(t *testing.T) {
	dir := t.TempDir()
	out := t.TempDir()
	html := filepath.Join(out, "wal.html")
	res := runBin(t, runOpts{}, "disk", "wal", "--dir", dir, "--size", "1m", "-o", "prom", "--html", html, "--textfile", out)
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	checkPromtool(t, []byte(res.stdout))
	if !regexp.MustCompile(`(?m)^etcdbench_workload_operations\{command="disk wal",dir="[^"]+",workload="wal"\} 455$`).MatchString(res.stdout) {
		t.Errorf("1m of whole 2300-byte writes is 455 operations:\n%s", res.stdout)
	}
	b, err := os.ReadFile(html)
	if err != nil || !bytes.Contains(b, []byte(`id="c0-wal-fdatasync-cdf"`)) {
		t.Errorf("no HTML report with the CDF: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "etcdbench_disk_wal_*.prom"))
	if len(files) != 1 {
		t.Fatalf("textfiles %v, want one etcdbench_disk_wal_<dir>.prom", files)
	}
	prom, err := os.ReadFile(files[0])
	if err != nil || !bytes.Equal(prom, []byte(res.stdout)) {
		t.Errorf("the textfile differs from -o prom: %v", err)
	}
	checkNoScratch(t, dir)
}

func TestReportUsageErrors(t *testing.T) {
	dir := t.TempDir()
	notResult := filepath.Join(dir, "other.json")
	if err := os.WriteFile(notResult, []byte(`{"hello":"world"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"report"}, "missing result file"},
		{"missing file", []string{"report", filepath.Join(dir, "nope.json")}, "no such file"},
		{"not a result", []string{"report", notResult}, "not an etcdbench result"},
		{"bad format", []string{"report", fixtureWAL, "--format", "pdf"}, `--format "pdf": want text, json, html, prom`},
		{"bad -o", []string{"report", fixtureWAL, "-o", "pdf"}, `--output "pdf": want text, json, html, prom`},
		{"-o and -f", []string{"report", fixtureWAL, "-o", "json", "-f", "text"}, "the same flag: give one"},
		{"textfile not a directory", []string{"report", fixtureWAL, "--textfile", filepath.Join(dir, "nope")}, "--textfile"},
		{"two results to one textfile", []string{"report", fixtureWAL, fixtureWAL, "--textfile", dir}, "would both be written to etcdbench_disk_wal"},
		{"html in a missing directory", []string{"report", fixtureWAL, "--html", filepath.Join(dir, "nope", "r.html")}, "does not exist"},
		{"json in a missing directory", []string{"report", fixtureWAL, "--json", filepath.Join(dir, "nope", "r.json")}, "--json " + filepath.Join(dir, "nope", "r.json") + ": directory"},
		{"json a directory", []string{"report", fixtureWAL, "--json", dir}, "is a directory: give a file name such as result.json"},
		{"disk wal bad output", []string{"disk", "wal", "--dir", dir, "-o", "xml"}, "want text, json, html, prom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runBin(t, runOpts{}, c.args...)
			if res.code != exitUsage || !strings.Contains(res.stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", res.code, res.stderr, exitUsage, c.want)
			}
			checkOneErrorLine(t, res.stderr)
		})
	}
}
