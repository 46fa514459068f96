package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/result"
)

// TestHTMLReportOfEveryCommand runs commands that the other tests run
// without --html (report, compare, disk wal and judge have theirs) with
// --html FILE and checks the page written: one self-contained page of
// that command, through a temporary file that is gone afterwards. Where
// the command's own -o html or -o prom is new (etcd, tune), stdout is
// checked too.
func TestHTMLReportOfEveryCommand(t *testing.T) {
	at := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		args  func(dir string) []string // dir: a directory to run on
		title string                    // the page's title
		// stdout: "html" when it is the same page, "prom" for an
		// exposition, else a string the text report holds.
		stdout string
	}{
		{"etcd put -o prom", func(d string) []string {
			return []string{"etcd", "put", "--dir", d, "--total", "200", "--clients", "2", "--no-progress", "-o", "prom"}
		}, "etcdbench etcd put", "prom"},
		{"etcd check -o html", func(d string) []string {
			return []string{"etcd", "check", "--load", "s", "--duration", "2s", "--dir", d, "--no-progress", "-o", "html"}
		}, "etcdbench etcd check", "html"},
		{"tune -o html", func(d string) []string { return tuneArgs(d, "-o", "html") }, "etcdbench tune", "html"},
		{"disk snapshot", func(d string) []string { return []string{"disk", "snapshot", "--dir", d, "--size", "8m"} }, "etcdbench disk snapshot", "Result:"},
		{"diagnose logs", func(string) []string { return []string{"diagnose", "logs", capture("etcd34-zap-slowdisk.log")} }, "etcdbench diagnose logs", "slow"},
		{"diagnose metrics", func(d string) []string {
			return []string{"diagnose", "metrics",
				"--from", copyCapture(t, d, "etcd37-slowdisk-before.txt", at), "--from", copyCapture(t, d, "etcd37-slowdisk-after.txt", at.Add(4*time.Second))}
		}, "etcdbench diagnose metrics", "Result:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, out := t.TempDir(), t.TempDir()
			html := filepath.Join(out, "report.html")
			res := runBin(t, runOpts{}, append(c.args(dir), "--html", html)...)
			if res.code != exitOK && res.code != exitFail {
				t.Fatalf("exit %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
			}
			b, err := os.ReadFile(html)
			if err != nil {
				t.Fatalf("--html wrote no page: %v", err)
			}
			page := string(b)
			checkHTMLPage(t, page)
			if !strings.Contains(page, "<title>"+c.title+"</title>") || !strings.Contains(page, `id="verdicts"`) || !strings.Contains(page, `id="environment"`) {
				t.Errorf("the page is not a report of %s with verdicts and environment", c.title)
			}
			if failed := strings.Contains(page, `<span class="badge FAIL">FAIL</span> `); failed != (res.code == exitFail) {
				t.Errorf("exit %d, and the page's status FAIL is %v", res.code, failed)
			}
			switch c.stdout {
			case "html":
				if res.stdout != page {
					t.Error("-o html differs from the --html page of the same run")
				}
			case "prom":
				checkPromtool(t, []byte(res.stdout))
				if !strings.Contains(res.stdout, `etcdbench_info{command="`+strings.TrimPrefix(c.title, "etcdbench ")+`"`) {
					t.Errorf("-o prom:\n%s", res.stdout)
				}
			default:
				if !strings.Contains(res.stdout, c.stdout) {
					t.Errorf("the text report lacks %q:\n%s", c.stdout, res.stdout)
				}
			}
			ents, err := os.ReadDir(out)
			if err != nil || len(ents) != 1 {
				t.Errorf("the directory of --html holds %d files (%v), want the page alone: no temporary file left", len(ents), err)
			}
			checkNoScratch(t, dir)
		})
	}
}

// etcd takes every format the result model renders; tune's runs would
// repeat one series in Prometheus, so it does not offer prom (nor take
// --textfile) and says why.
func TestEtcdAndTuneFormatErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"etcd put -o xml", []string{"etcd", "put", "--dir", dir, "-o", "xml"}, `--output "xml": want text, json, html, prom`},
		{"etcd check -o xml", []string{"etcd", "check", "--dir", dir, "-o", "xml"}, `--output "xml": want text, json, html, prom`},
		{"tune -o xml", tuneArgs(dir, "-o", "xml"), `--output "xml": want text, json, html (`},
		{"tune -o prom", tuneArgs(dir, "-o", "prom"), "--save-dir"},
		{"tune --textfile", tuneArgs(dir, "--textfile", t.TempDir()), "--save-dir"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runBin(t, runOpts{}, c.args...)
			if res.code != exitUsage || !strings.Contains(res.stderr, c.want) || res.stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d and %q", res.code, res.stdout, res.stderr, exitUsage, c.want)
			}
			checkOneErrorLine(t, res.stderr)
		})
	}
	checkNoScratch(t, dir)
}

// TestJSONReportFile: --json FILE writes what -o json prints, through a
// temporary file that is gone afterwards, whatever the -o of stdout.
func TestJSONReportFile(t *testing.T) {
	out := t.TempDir()
	file := filepath.Join(out, "result.json")
	args := []string{"diagnose", "logs", capture("etcd34-zap-slowdisk.log")}
	res := runBin(t, runOpts{}, append(args, "--json", file)...)
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d; stderr:\n%s", res.code, res.stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("--json wrote no file: %v", err)
	}
	asJSON := runBin(t, runOpts{}, append(args, "-o", "json")...)
	// The two runs differ only in their command line and times.
	norm := func(b []byte) string {
		r, err := result.Read(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("not a result: %v\n%s", err, b)
		}
		r.Tool.Args, r.StartedAt, r.FinishedAt = nil, time.Time{}, time.Time{}
		out, _ := json.Marshal(r)
		return string(out)
	}
	if norm(b) != norm([]byte(asJSON.stdout)) {
		t.Errorf("--json's file differs from -o json's stdout:\n%s\n---\n%s", b, asJSON.stdout)
	}
	if ents, err := os.ReadDir(out); err != nil || len(ents) != 1 {
		t.Errorf("the directory of --json holds %d files (%v), want the file alone", len(ents), err)
	}
}
