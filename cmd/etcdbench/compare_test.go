package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	res := runBin(t, runOpts{}, "compare", fixtureWAL, fixtureWAL4m)
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{"B vs A", "fdatasync p99", "operations per second", "better"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("comparison lacks %q:\n%s", want, res.stdout)
		}
	}
	html := filepath.Join(t.TempDir(), "cmp.html")
	res = runBin(t, runOpts{}, "compare", fixtureWAL, fixtureWAL4m, fixtureWAL, "--format", "json", "--html", html)
	if res.code != exitOK || !strings.Contains(res.stdout, `"label": "C"`) {
		t.Fatalf("exit %d: %s%s", res.code, res.stdout, res.stderr)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "cmp-0-fdatasync-cdf") {
		t.Errorf("--html wrote no comparison with CDFs: %v", err)
	}
}

func TestCompareUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"one file", []string{"compare", fixtureWAL}, "at least two"},
		{"mixed workloads", []string{"compare", fixtureWAL, fixtureEtcd}, "ran different workloads"},
		{"bad format", []string{"compare", fixtureWAL, fixtureWAL4m, "-f", "prom"}, `--format "prom": want text, json or html`},
		{"bad output", []string{"compare", fixtureWAL, fixtureWAL4m, "-o", "prom"}, `--output "prom": want text, json or html`},
		{"textfile", []string{"compare", fixtureWAL, fixtureWAL4m, "--textfile", t.TempDir()}, "does not apply"},
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

// saveWAL runs a short disk wal with args and saves its result.
func saveWAL(t *testing.T, name string, args ...string) string {
	t.Helper()
	res := runBin(t, runOpts{}, append([]string{"disk", "wal", "--dir", t.TempDir(), "-o", "json"}, args...)...)
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("disk wal %v: exit %d: %s", args, res.code, res.stderr)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(res.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Real runs with different --bs are compared with a warning that names
// the block size, in every format; runs that differ only in their length
// are compared without one.
func TestCompareWarnsOfDifferentParameters(t *testing.T) {
	small := saveWAL(t, "2300.json", "--count", "60")
	large := saveWAL(t, "64k.json", "--count", "60", "--bs", "64k")
	longer := saveWAL(t, "2300-longer.json", "--count", "90")

	res := runBin(t, runOpts{}, "compare", small, large)
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	warn, table := strings.Index(res.stdout, "WARNING: the runs differ in parameters"), strings.Index(res.stdout, "B vs A")
	if warn < 0 || table < warn || !strings.Contains(res.stdout, "wal block_size: A 2300, B 65536") {
		t.Errorf("no warning naming block_size above the table:\n%s", res.stdout)
	}

	html := filepath.Join(t.TempDir(), "cmp.html")
	res = runBin(t, runOpts{}, "compare", small, large, "-o", "json", "--html", html)
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var doc struct {
		Differences []struct {
			Workload, Parameter string
			Values              []string
		} `json:"parameter_differences"`
		Rows []struct {
			Figure string     `json:"figure"`
			Values []float64  `json:"values"`
			Deltas []*float64 `json:"deltas"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("comparison JSON: %v\n%s", err, res.stdout)
	}
	if len(doc.Differences) != 1 || doc.Differences[0].Parameter != "block_size" || strings.Join(doc.Differences[0].Values, " ") != "2300 65536" {
		t.Errorf("parameter_differences %+v, want block_size 2300 65536", doc.Differences)
	}
	for _, r := range doc.Rows {
		if r.Figure == "operations per second" && (len(r.Deltas) != 2 || r.Deltas[0] != nil || r.Deltas[1] == nil || *r.Deltas[1] != (r.Values[1]-r.Values[0])/r.Values[0]) {
			t.Errorf("row %+v: want the deltas, null for A", r)
		}
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "WARNING") || !strings.Contains(string(b), "wal block_size: A 2300, B 65536") {
		t.Errorf("the HTML comparison lacks the warning: %v", err)
	}

	res = runBin(t, runOpts{}, "compare", small, longer)
	if res.code != exitOK || strings.Contains(res.stdout, "WARNING") {
		t.Errorf("exit %d; runs differing in --count only are compared with a warning:\n%s", res.code, res.stdout)
	}
}
