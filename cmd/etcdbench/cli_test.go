package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/report"
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
		{"--rate 0", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--rate", "0"} }},
		{"--rate -5", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--rate", "-5"} }},
		{"--rate abc", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--rate", "abc"} }},
		{"--rate above one process", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--rate", "10000000"} }},
		{"--rate with --bs", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--rate", "100", "--bs", "4k"} }},
		{"--entry-bytes without --rate", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--entry-bytes", "100"} }},
		{"wal-under-load --rate abc", func(d string) []string { return []string{"disk", "wal-under-load", "--dir", d, "--rate", "abc"} }},
		{"wal-under-load --rate -1", func(d string) []string { return []string{"disk", "wal-under-load", "--dir", d, "--rate", "-1"} }},
		{"wal-under-load --rate with --clients", func(d string) []string {
			return []string{"disk", "wal-under-load", "--dir", d, "--rate", "100", "--clients", "4"}
		}},
		{"capacity --start abc", func(d string) []string { return []string{"capacity", "--dir", d, "--start", "abc"} }},
		{"capacity --max-rate 0", func(d string) []string { return []string{"capacity", "--dir", d, "--max-rate", "0"} }},
		{"capacity --max-rate below --start", func(d string) []string {
			return []string{"capacity", "--dir", d, "--start", "1000", "--max-rate", "500"}
		}},
		{"capacity without --dir", func(d string) []string { return []string{"capacity"} }},
		{"etcd capacity --start abc", func(d string) []string { return []string{"etcd", "capacity", "--dir", d, "--start", "abc"} }},
		{"etcd capacity --step 0", func(d string) []string { return []string{"etcd", "capacity", "--dir", d, "--step", "0"} }},
		{"etcd capacity external without --yes", func(d string) []string {
			return []string{"etcd", "capacity", "--endpoints", "http://127.0.0.1:1"}
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
		{"capacity --dir /proc", func(d string) []string { return []string{"capacity", "--dir", "/proc"} }},
		{"check --dir /sys", func(d string) []string { return []string{"check", "--dir", "/sys", "--quick"} }},
		{"clean --html", func(d string) []string { return []string{"clean", "--dir", d, "--html", filepath.Join(d, "r.html")} }},
		{"clean --textfile", func(d string) []string { return []string{"clean", "--dir", d, "--textfile", d} }},
		{"tune -o prom", func(d string) []string { return []string{"tune", "--dir", d, "-o", "prom"} }},
		{"tune --textfile", func(d string) []string { return []string{"tune", "--dir", d, "--textfile", d} }},
		{"exporter --html", func(d string) []string { return []string{"exporter", "--html", filepath.Join(d, "r.html")} }},
		{"etcd without workload", func(d string) []string { return []string{"etcd"} }},
		{"disk wal --preset", func(d string) []string { return []string{"disk", "wal", "--dir", d, "--preset", "quick"} }},
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
			res := runBin(t, runOpts{dir: d}, tc.args(d)...)
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

// Errors that come from deeper than the command line (an etcd that does not
// answer, a file that is not what it should be) reach the user as one line
// with one "etcdbench: " and no internal package's name.
func TestErrorsInUserTerms(t *testing.T) {
	t.Parallel()
	dead := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	garbage := filepath.Join(t.TempDir(), "garbage.json")
	if err := os.WriteFile(garbage, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // in the line
	}{
		{"etcd put against a dead endpoint", []string{"etcd", "put", "--endpoints", dead, "--yes", "--total", "1", "--no-progress"}, "etcd does not answer"},
		{"--yes without --endpoints", []string{"etcd", "put", "--dir", t.TempDir(), "--yes", "--total", "1", "--no-progress"}, "--yes applies to --endpoints only"},
		{"diagnose metrics of a dead endpoint", []string{"diagnose", "metrics", "--endpoints", dead, "--no-progress"}, "cannot read /metrics"},
		{"report of garbage", []string{"report", garbage}, "not an etcdbench result"},
		{"judge of garbage", []string{"judge", garbage}, "fio"},
		{"diagnose wal of a missing dir", []string{"diagnose", "wal", "--data-dir", filepath.Join(t.TempDir(), "missing")}, "missing"},
		{"capacity --start abc", []string{"capacity", "--dir", t.TempDir(), "--start", "abc"}, `--start`},
		{"disk wal --rate abc", []string{"disk", "wal", "--dir", t.TempDir(), "--rate", "abc"}, `--rate: "abc" is not a number`},
		{"disk wal --count x", []string{"disk", "wal", "--dir", t.TempDir(), "--count", "x"}, `--count: "x" is not a whole number`},
		{"trace --pid abc", []string{"trace", "--pid", "abc"}, `--pid: "abc" is not a whole number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := runBin(t, runOpts{}, tc.args...)
			if res.code == exitOK {
				t.Errorf("exit code 0; stderr:\n%s", res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("stderr does not say %q: %q", tc.want, res.stderr)
			}
		})
	}
}

// A mistyped command is answered with the command it most likely meant.
func TestMistypedCommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dsk", "wal"}, `unknown command "dsk" for "etcdbench"; did you mean "disk"?`},
		{[]string{"capcity"}, `did you mean "capacity"?`},
		{[]string{"diagnose", "metics"}, `unknown command "metics" for "etcdbench diagnose"; did you mean "metrics"?`},
		{[]string{"xyzzy"}, `unknown command "xyzzy" for "etcdbench"`},
		{[]string{"trce"}, `did you mean "tune" or "trace"?`},
		{[]string{"disk", "wall"}, `unknown workload "wall": want one of`},
		{[]string{"disk", "wall"}, `did you mean "wal" or "all"?`},
		{[]string{"etcd", "pt"}, `did you mean "put"?`},
	} {
		var out, errb strings.Builder
		if code := execute(context.Background(), tc.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d and %q", tc.args, code, errb.String(), exitUsage, tc.want)
		}
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
			res := runBin(t, o, tc.args(d)...)
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
		// not are not in stdout: the root's report file flags a
		// command refuses are not offered in its help.
		not []string
	}{
		{"--version", []string{"--version"}, "etcdbench", nil},
		{"--help", []string{"--help"}, "--textfile", nil},
		{"help disk wal", []string{"help", "disk", "wal"}, "--bs", nil},
		{"disk wal --help", []string{"disk", "wal", "--help"}, "--html", nil},
		{"clean --help", []string{"clean", "--help"}, "--dir", []string{"--html", "--textfile"}},
		{"help exporter", []string{"help", "exporter"}, "--listen", []string{"--html", "--textfile"}},
		{"tune --help", []string{"tune", "--help"}, "--html", []string{"--textfile"}},
		{"etcd --help", []string{"etcd", "--help"}, "--textfile", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			res := runBin(t, runOpts{dir: d}, tc.args...)
			if res.code != exitOK {
				t.Errorf("exit code %d, want 0; stderr:\n%s", res.code, res.stderr)
			}
			if !strings.Contains(res.stdout, tc.want) {
				t.Errorf("stdout does not contain %q:\n%s", tc.want, res.stdout)
			}
			for _, n := range tc.not {
				if strings.Contains(res.stdout, n) {
					t.Errorf("stdout offers %s, which the command refuses:\n%s", n, res.stdout)
				}
			}
			if res.stderr != "" {
				t.Errorf("stderr not empty:\n%s", res.stderr)
			}
			checkSnapshot(t, d, map[string]string{})
		})
	}
}

// parseCommand finds the command of args in a fresh command tree and
// parses its flags, as cobra does before running it.
func parseCommand(t *testing.T, args []string) *cobra.Command {
	t.Helper()
	cmd, rest, err := newRootCmd(io.Discard, io.Discard).Find(args)
	if err != nil {
		t.Fatalf("finding the command of %q: %v", args, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("parsing %q: %v", rest, err)
	}
	return cmd
}

// The command line a result records parses back, with the same command,
// to the same flag values; and report.CommandLine quotes it so that a
// shell splits it into the same words.
func TestCommandLineRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string // among the recorded arguments
	}{
		{"stringArray of comma lists", []string{"diagnose", "metrics", "--from", "a.txt,b.txt", "--from", "c.txt,d.txt"},
			[]string{"--from=a.txt,b.txt", "--from=c.txt,d.txt"}},
		{"stringSlice", []string{"etcd", "put", "--endpoints", "http://h1:2379,http://h2:2379", "--yes"},
			[]string{"--endpoints=http://h1:2379,http://h2:2379", "--yes=true"}},
		{"stringSlice given twice", []string{"diagnose", "metrics", "--endpoints", "http://h1:2379", "--endpoints", "http://h2:2379,http://h3:2379"},
			[]string{"--endpoints=http://h1:2379,http://h2:2379,http://h3:2379"}},
		{"stringSlice element with a comma", []string{"diagnose", "metrics", `--metrics-url=http://h1:2381/metrics,"http://h2:2381/metrics?a=1,2"`},
			[]string{`--metrics-url=http://h1:2381/metrics,"http://h2:2381/metrics?a=1,2"`}},
		{"stringArray with spaces and quotes", []string{"tune", "--dir", "/tmp/a dir", "--vary", "snapshot-count=10000,100000", "--vary", `members=1,3`, "--html", "/tmp/it's.html"},
			[]string{"--vary=snapshot-count=10000,100000", "--vary=members=1,3", "--dir=/tmp/a dir", "--html=/tmp/it's.html"}},
		{"scalars", []string{"disk", "wal", "--dir", "/tmp", "--bs", "4k", "--time-based", "-o", "json"},
			[]string{"--bs=4k", "--time-based=true", "--output=json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := parseCommand(t, c.args)
			rec := commandLine(cmd)
			for _, w := range c.want {
				if !slices.Contains(rec, w) {
					t.Errorf("recorded %q lacks %q", rec, w)
				}
			}
			back := parseCommand(t, append(strings.Fields(rec[0])[1:], rec[1:]...))
			if back.CommandPath() != cmd.CommandPath() {
				t.Fatalf("recorded %q runs %s, not %s", rec, back.CommandPath(), cmd.CommandPath())
			}
			changed := 0
			cmd.Flags().VisitAll(func(f *pflag.Flag) {
				g := back.Flags().Lookup(f.Name)
				if g == nil || g.Changed != f.Changed || g.Value.String() != f.Value.String() {
					t.Errorf("--%s: given %q (changed %v), parsed back from %q as %v", f.Name, f.Value, f.Changed, rec, g)
				}
				if f.Changed {
					changed++
				}
			})
			if changed == 0 {
				t.Fatal("no flag was given")
			}
			// What a report prints, a shell splits into the same words.
			sh, err := exec.LookPath("sh")
			if err != nil {
				t.Skip("no sh to split the quoted command line")
			}
			out, err := exec.Command(sh, "-c", `printf '%s\0' `+report.CommandLine(rec)).Output()
			if err != nil {
				t.Fatalf("sh: %v", err)
			}
			words := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			if want := append(strings.Fields(rec[0]), rec[1:]...); !slices.Equal(words, want) {
				t.Errorf("a shell splits %s into %q, want %q", report.CommandLine(rec), words, want)
			}
		})
	}
}

// A password given with --user stays out of the recorded command line.
func TestCommandLineRedactsPassword(t *testing.T) {
	cmd := parseCommand(t, []string{"etcd", "put", "--endpoints", "https://h1:2379,https://h2:2379", "--user", "root:s3cret", "--yes"})
	rec := redactArgs(commandLine(cmd))
	if !slices.Contains(rec, "--user=root:"+redacted) || !slices.Contains(rec, "--endpoints=https://h1:2379,https://h2:2379") {
		t.Errorf("recorded %q: want --user=root:%s and the endpoints", rec, redacted)
	}
	if strings.Contains(strings.Join(rec, " "), "s3cret") {
		t.Errorf("recorded %q holds the password", rec)
	}
}
