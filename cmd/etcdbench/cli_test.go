package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestBadInput runs the binary with mistakes in its command line: each must
// exit 2 with one line on stderr, and must not touch the directory.
func TestBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args func(d string) []string // d: a directory the run must leave alone
	}{
		{"disk wal without --dir", func(d string) []string { return []string{"disk", "wal", "--count", "5"} }},
		{"--dir empty", func(d string) []string { return []string{"disk", "wal", "--dir=", "--count", "5"} }},
		{"--dir does not exist", func(d string) []string {
			return []string{"disk", "wal", "--dir", filepath.Join(d, "missing"), "--count", "5"}
		}},
		{"--dir is a file", func(d string) []string {
			return []string{"disk", "wal", "--dir", filepath.Join(d, "a-file"), "--count", "5"}
		}},
		{"--bs 0", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--bs", "0", "--count", "5"} }},
		{"--bs -5", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--bs", "-5", "--count", "5"} }},
		{"--bs abc", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--bs", "abc", "--count", "5"} }},
		{"--bs larger than --size", func(d string) []string {
			return []string{"disk", "wal", "--dir", d, "--bs", "8k", "--size", "4k"}
		}},
		{"--size 1x", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--size", "1x"} }},
		{"--size 0", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--size", "0"} }},
		{"--runtime abc", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--runtime", "abc"} }},
		{"--runtime -1s", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--runtime", "-1s"} }},
		{"--runtime 0 in adaptive mode", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--runtime", "0"} }},
		{"--min-runtime -1s", func(d string) []string {
			return []string{"disk", "wal", "--dir", d, "--min-runtime", "-1s", "--count", "5"}
		}},
		{"--count 0", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--count", "0"} }},
		{"--count abc", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--count", "abc"} }},
		{"--size with --count", func(d string) []string {
			return []string{"disk", "wal", "--dir", d, "--size", "1m", "--count", "5"}
		}},
		{"--count with --time-based", func(d string) []string {
			return []string{"disk", "wal", "--dir", d, "--count", "5", "--time-based"}
		}},
		{"unknown flag", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--count", "5", "--bogus"} }},
		{"unexpected argument", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--count", "5", "extra"} }},
		{"--output xml", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--count", "5", "--output", "xml"} }},
		{"--confidence 1.5", func(d string) []string {
			return []string{"disk", "wal", "--dir", d, "--count", "5", "--confidence", "1.5"}
		}},
		{"--wal-p99 0", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--count", "5", "--wal-p99", "0"} }},
		{"--min-samples -1", func(d string) []string {
			return []string{"disk", "wal", "--dir", d, "--count", "5", "--min-samples", "-1"}
		}},
		{"disk without workload", func(d string) []string { return []string{"disk"} }},
		{"unknown command", func(d string) []string { return []string{"bogus"} }},
		{"root with unknown flag", func(d string) []string { return []string{"--count", "0"} }},
		{"root with two budgets", func(d string) []string { return []string{"--quick", "--thorough", "--dir", d} }},
		{"check with bad output", func(d string) []string { return []string{"check", "--dir", d, "-o", "xml"} }},
		{"check --dir missing", func(d string) []string { return []string{"check", "--dir", filepath.Join(d, "missing")} }},
		{"clean without --dir", func(d string) []string { return []string{"clean"} }},
		{"clean --dir does not exist", func(d string) []string { return []string{"clean", "--dir", filepath.Join(d, "missing")} }},
		{"clean with argument", func(d string) []string { return []string{"clean", "--dir", d, "extra"} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, "a-file"), []byte("keep me\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, d)
			// Run inside d, so a command that wrongly falls back to the
			// current directory is caught by the snapshot too.
			res := run(t, runOpts{dir: d}, tc.args(d)...)
			if res.code != exitUsage {
				t.Errorf("exit code %d, want %d; stdout:\n%s\nstderr:\n%s", res.code, exitUsage, res.stdout, res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			if res.stdout != "" {
				t.Errorf("stdout not empty:\n%s", res.stdout)
			}
			checkNoScratch(t, d)
			checkSnapshot(t, d, before)
		})
	}
}

// jsonResult is the part of the JSON report the tests look at.
type jsonResult struct {
	Schema      string `json:"schema"`
	Status      string `json:"status"`
	Interrupted bool   `json:"interrupted"`
	Workloads   []struct {
		Name     string            `json:"name"`
		Ops      int64             `json:"ops"`
		Bytes    int64             `json:"bytes"`
		Notes    []string          `json:"notes"`
		Verdicts []json.RawMessage `json:"verdicts"`
	} `json:"workloads"`
}

// parseJSONResult decodes a JSON report and checks its schema and that it
// has one workload.
func parseJSONResult(t *testing.T, stdout string) jsonResult {
	t.Helper()
	var r jsonResult
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("stdout is not valid JSON: %v\n%s", err, stdout)
	}
	if r.Schema != "etcdbench.result/v1" {
		t.Errorf("schema %q, want etcdbench.result/v1", r.Schema)
	}
	if len(r.Workloads) != 1 {
		t.Fatalf("%d workloads in the report, want 1", len(r.Workloads))
	}
	return r
}

// TestHappyPath runs short real WAL checks and looks at their reports.
func TestHappyPath(t *testing.T) {
	tests := []struct {
		name     string
		args     func(d string) []string
		inDir    bool // run with the working directory set to d
		asNobody bool // run as uid/gid 65534 in a directory it owns
		json     bool
		wantOps  int64 // exact; 0: any positive number
		wantBs   int64 // block size the report's bytes are counted in
		wantText string
	}{
		{
			name:    "disk wal count json",
			args:    func(d string) []string { return []string{"disk", "wal", "--dir", d, "--count", "300", "-o", "json"} },
			json:    true,
			wantOps: 300,
			wantBs:  2300,
		},
		{
			name: "disk wal bs 4k count json",
			args: func(d string) []string {
				return []string{"disk", "wal", "--dir", d, "--count", "20", "--bs", "4k", "-o", "json"}
			},
			json:    true,
			wantOps: 20,
			wantBs:  4096,
		},
		{
			name: "disk wal size json",
			args: func(d string) []string {
				return []string{"disk", "wal", "--dir", d, "--size", "1m", "-o", "json"}
			},
			json:    true,
			wantOps: 1 << 20 / 2300, // whole blocks only
			wantBs:  2300,
		},
		{
			name: "disk wal adaptive json",
			args: func(d string) []string {
				return []string{"disk", "wal", "--dir", d, "--runtime", "2s", "--min-runtime", "1s", "--min-samples", "10", "-o", "json"}
			},
			json:   true,
			wantBs: 2300,
		},
		{
			name:     "disk wal runs on the current directory",
			args:     func(string) []string { return []string{"disk", "wal", "--dir", ".", "--count", "100"} },
			inDir:    true,
			wantText: "Result:",
		},
		{
			name:     "unprivileged user",
			args:     func(d string) []string { return []string{"disk", "wal", "--dir", d, "--count", "50"} },
			asNobody: true,
			wantText: "Result:",
		},
		{
			name: "disk wal json on the current directory",
			args: func(string) []string {
				return []string{"disk", "wal", "--dir", ".", "--count", "100", "--output", "json"}
			},
			inDir:   true,
			json:    true,
			wantOps: 100,
			wantBs:  2300,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			o := runOpts{}
			if tc.asNobody {
				if os.Geteuid() != 0 {
					t.Skip("skipped: running as another user needs root")
				}
				d = worldTempDir(t)
				if err := os.Chown(d, 65534, 65534); err != nil {
					t.Fatal(err)
				}
				o.cred = &syscall.Credential{Uid: 65534, Gid: 65534}
			}
			if err := os.WriteFile(filepath.Join(d, "existing"), []byte("data\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, d)
			if tc.inDir {
				o.dir = d
			}
			res := run(t, o, tc.args(d)...)
			if res.code != exitOK && res.code != exitFail {
				t.Fatalf("exit code %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
			}
			if res.stderr != "" {
				t.Errorf("stderr not empty:\n%s", res.stderr)
			}
			if tc.json {
				r := parseJSONResult(t, res.stdout)
				w := r.Workloads[0]
				if w.Name != "wal" {
					t.Errorf("workload %q, want wal", w.Name)
				}
				if w.Ops <= 0 || tc.wantOps > 0 && w.Ops != tc.wantOps {
					t.Errorf("%d ops, want %d (0: any positive number)", w.Ops, tc.wantOps)
				}
				if w.Bytes != w.Ops*tc.wantBs {
					t.Errorf("bytes %d, want %d ops * %d", w.Bytes, w.Ops, tc.wantBs)
				}
				if failed := r.Status == "FAIL"; failed != (res.code == exitFail) {
					t.Errorf("status %q does not match exit code %d", r.Status, res.code)
				}
			}
			if tc.wantText != "" && !strings.Contains(res.stdout, tc.wantText) {
				t.Errorf("stdout does not contain %q:\n%s", tc.wantText, res.stdout)
			}
			checkNoScratch(t, d)
			checkSnapshot(t, d, before)
		})
	}
}

// TestInfo runs the informational commands: they succeed, print to stdout
// and write nothing.
func TestInfo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string // in stdout
	}{
		{"--version", []string{"--version"}, "etcdbench"},
		{"--help", []string{"--help"}, "disk"},
		{"help disk wal", []string{"help", "disk", "wal"}, "--bs"},
		{"disk wal --help", []string{"disk", "wal", "--help"}, "--min-runtime"},
		{"clean --help", []string{"clean", "--help"}, "--dir"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			res := run(t, runOpts{dir: d}, tc.args...)
			if res.code != exitOK {
				t.Errorf("exit code %d, want 0; stderr:\n%s", res.code, res.stderr)
			}
			if !strings.Contains(res.stdout, tc.want) {
				t.Errorf("stdout does not contain %q:\n%s", tc.want, res.stdout)
			}
			if res.stderr != "" {
				t.Errorf("stderr not empty:\n%s", res.stderr)
			}
			checkSnapshot(t, d, map[string]string{})
		})
	}
}
