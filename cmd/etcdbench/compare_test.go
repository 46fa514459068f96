package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	res := run(t, runOpts{}, "compare", fixtureWAL, fixtureWAL4m)
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{"B vs A", "fdatasync p99", "operations per second", "better"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("comparison lacks %q:\n%s", want, res.stdout)
		}
	}
	html := filepath.Join(t.TempDir(), "cmp.html")
	res = run(t, runOpts{}, "compare", fixtureWAL, fixtureWAL4m, fixtureWAL, "--format", "json", "--html", html)
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
		{"bad format", []string{"compare", fixtureWAL, fixtureWAL4m, "-f", "prom"}, "want text, json or html"},
		{"textfile", []string{"compare", fixtureWAL, fixtureWAL4m, "--textfile", t.TempDir()}, "does not apply"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, runOpts{}, c.args...)
			if res.code != exitUsage || !strings.Contains(res.stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", res.code, res.stderr, exitUsage, c.want)
			}
			checkOneErrorLine(t, res.stderr)
		})
	}
}
