package main

// Tests of `disk all` and the `disk <workload>` commands other than wal.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/disk"
	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
)

// allOrder is the documented order in which `disk all` runs the workloads.
var allOrder = []string{"wal", "backend", "wal-under-load", "mixed", "snapshot", "compaction", "recovery"}

// diskReport is the part of a multi-workload JSON report the tests look at.
type diskReport struct {
	Schema      string         `json:"schema"`
	Status      string         `json:"status"`
	Interrupted bool           `json:"interrupted"`
	Workloads   []diskWorkload `json:"workloads"`
}

type diskWorkload struct {
	Name      string        `json:"name"`
	Engine    string        `json:"engine"`
	Ops       int64         `json:"ops"`
	Bytes     int64         `json:"bytes"`
	Latencies []diskLatency `json:"latencies"`
	Figures   []struct {
		Name string `json:"name"`
	} `json:"figures"`
	Verdicts []struct {
		Check  string `json:"check"`
		Status string `json:"status"`
	} `json:"verdicts"`
}

type diskLatency struct {
	Name        string `json:"name"`
	Count       int64  `json:"count"`
	Percentiles []struct {
		P       float64 `json:"p"`
		ValueNs int64   `json:"value_ns"`
	} `json:"percentiles"`
}

// latency returns the latency called name, or nil.
func (w *diskWorkload) latency(name string) *diskLatency {
	for i := range w.Latencies {
		if w.Latencies[i].Name == name {
			return &w.Latencies[i]
		}
	}
	return nil
}

// at returns the value of percentile p, or -1 when the report has none.
func (l *diskLatency) at(p float64) int64 {
	for _, x := range l.Percentiles {
		if x.P == p {
			return x.ValueNs
		}
	}
	return -1
}

func (w *diskWorkload) names() (lat, fig, ver []string) {
	for _, l := range w.Latencies {
		lat = append(lat, l.Name)
	}
	for _, f := range w.Figures {
		fig = append(fig, f.Name)
	}
	for _, v := range w.Verdicts {
		ver = append(ver, v.Check)
	}
	return lat, fig, ver
}

// parseDiskReport decodes a JSON report and checks its schema.
func parseDiskReport(t *testing.T, stdout string) diskReport {
	t.Helper()
	var r diskReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("stdout is not valid JSON: %v\n%s", err, stdout)
	}
	if r.Schema != "etcdbench.result/v1" {
		t.Errorf("schema %q, want etcdbench.result/v1", r.Schema)
	}
	return r
}

// workloadNames lists the report's workloads in order.
func (r diskReport) workloadNames() []string {
	var names []string
	for _, w := range r.Workloads {
		names = append(names, w.Name)
	}
	return names
}

// TestDiskBadInput gives the workload commands settings they must refuse:
// exit 2, one line on stderr, nothing written.
func TestDiskBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    func(d string) []string // d: a directory the run must leave alone
		wantMsg string                  // in stderr, when set
	}{
		{"mixed --iodepth 0", func(d string) []string { return []string{"disk", "mixed", "--dir", d, "--iodepth", "0"} }, "--iodepth"},
		{"mixed --numjobs x", func(d string) []string { return []string{"disk", "mixed", "--dir", d, "--numjobs", "x"} }, "--numjobs"},
		{"mixed --rwmixread 101", func(d string) []string { return []string{"disk", "mixed", "--dir", d, "--rwmixread", "101"} }, "--rwmixread"},
		{"mixed --engine libaio", func(d string) []string { return []string{"disk", "mixed", "--dir", d, "--engine", "libaio"} }, "libaio"},
		{"mixed --bs 1000 (not a multiple of 4k)", func(d string) []string { return []string{"disk", "mixed", "--dir", d, "--bs", "1000"} }, "--bs"},
		{"mixed --output xml", func(d string) []string { return []string{"disk", "mixed", "--dir", d, "--output", "xml"} }, "xml"},
		{"snapshot --size -1", func(d string) []string { return []string{"disk", "snapshot", "--dir", d, "--size", "-1"} }, "--size"},
		{"snapshot --bs larger than --size", func(d string) []string {
			return []string{"disk", "snapshot", "--dir", d, "--bs", "2m", "--size", "1m"}
		}, "--bs"},
		{"snapshot with an argument", func(d string) []string { return []string{"disk", "snapshot", "--dir", d, "extra-arg"} }, "extra-arg"},
		{"recovery --bs 1000 (not a multiple of 4k)", func(d string) []string { return []string{"disk", "recovery", "--dir", d, "--bs", "1000"} }, "--bs"},
		{"backend --pages 0", func(d string) []string { return []string{"disk", "backend", "--dir", d, "--pages", "0"} }, "--pages"},
		{"backend --interval soon", func(d string) []string { return []string{"disk", "backend", "--dir", d, "--interval", "soon"} }, "--interval"},
		{"wal-under-load --background disco", func(d string) []string {
			return []string{"disk", "wal-under-load", "--dir", d, "--background", "disco"}
		}, "disco"},
		{"all --quick --thorough", func(d string) []string { return []string{"disk", "all", "--dir", d, "--quick", "--thorough"} }, "--quick"},
		{"all --preset leisurely", func(d string) []string { return []string{"disk", "all", "--dir", d, "--preset", "leisurely"} }, "leisurely"},
		{"all without --dir", func(d string) []string { return []string{"disk", "all"} }, "--dir"},
		{"unknown workload", func(d string) []string { return []string{"disk", "nope", "--dir", d} }, "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := dirWithPrecious(t)
			before := snapshot(t, d)
			// Run inside d, so a command that falls back to the current
			// directory is caught by the snapshot too.
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
			if !strings.Contains(res.stderr, tc.wantMsg) {
				t.Errorf("stderr does not name %q: %s", tc.wantMsg, res.stderr)
			}
		})
	}
}

// TestDiskWorkloads runs each workload alone with tiny settings and looks
// at its JSON report.
func TestDiskWorkloads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		workload string
		args     []string
		check    func(t *testing.T, w *diskWorkload)
	}{
		{
			workload: "mixed",
			args:     []string{"--size", "8m", "--runtime", "1s", "--numjobs", "1", "--iodepth", "4"},
			check: func(t *testing.T, w *diskWorkload) {
				wantLatencies(t, w, "read", "write")
				wantFigures(t, w, "read_iops", "write_iops")
				if w.Engine != "io_uring" && w.Engine != "psync" {
					t.Errorf("engine %q, want io_uring or psync", w.Engine)
				}
				if w.Bytes != w.Ops*4096 {
					t.Errorf("bytes %d, want %d ops * 4096", w.Bytes, w.Ops)
				}
			},
		},
		{
			workload: "snapshot",
			args:     []string{"--size", "8m"},
			check: func(t *testing.T, w *diskWorkload) {
				wantVerdicts(t, w, "snapshot_bandwidth")
				wantFigures(t, w, "time_to_durable", "durable_bandwidth", "final_fdatasync")
				if w.Ops != 8 || w.Bytes != 8<<20 {
					t.Errorf("%d ops, %d bytes; want 8 writes of 1 MiB", w.Ops, w.Bytes)
				}
				// No --sync-every: the only fdatasync is the final one.
				if l := w.latency("fdatasync"); l == nil || l.Count != 1 {
					t.Errorf("fdatasync latency %+v, want exactly one", l)
				}
			},
		},
		{
			workload: "compaction",
			args:     []string{"--size", "8m", "--sync-every", "1m"},
			check: func(t *testing.T, w *diskWorkload) {
				wantLatencies(t, w, "fdatasync", "write")
				if w.Ops != 128 || w.Bytes != 8<<20 {
					t.Errorf("%d ops, %d bytes; want 128 writes of 64 KiB", w.Ops, w.Bytes)
				}
				// One fdatasync after each MiB, then the final one.
				if l := w.latency("fdatasync"); l == nil || l.Count != 9 {
					t.Errorf("fdatasync latency %+v, want 9 of them", l)
				}
			},
		},
		{
			workload: "recovery",
			args:     []string{"--size", "8m", "--random-runtime", "200ms"},
			check: func(t *testing.T, w *diskWorkload) {
				wantVerdicts(t, w, "recovery_bandwidth")
				wantLatencies(t, w, "sequential-read", "random-read")
				wantFigures(t, w, "sequential_read_bandwidth", "time_to_read_100MB", "time_to_read_1GB", "random_read_iops")
				if l := w.latency("sequential-read"); l == nil || l.Count != 8 {
					t.Errorf("sequential-read latency %+v, want 8 reads of 1 MiB", l)
				}
			},
		},
		{
			workload: "backend",
			args:     []string{"--db-size", "4m", "--runtime", "1s", "--min-runtime", "500ms"},
			check: func(t *testing.T, w *diskWorkload) {
				wantVerdicts(t, w, "backend_commit_p99")
				wantLatencies(t, w, "commit", "fdatasync")
				// Each commit syncs twice: its pages, then the meta page.
				if l := w.latency("fdatasync"); l == nil || l.Count != 2*w.Ops {
					t.Errorf("fdatasync latency %+v, want 2 per commit (%d commits)", l, w.Ops)
				}
			},
		},
		{
			workload: "wal-under-load",
			args:     []string{"--runtime", "1s", "--min-runtime", "500ms"},
			check: func(t *testing.T, w *diskWorkload) {
				wantVerdicts(t, w, "wal_fsync_p99_under_load")
				// Alone, it measures the idle WAL itself.
				wantLatencies(t, w, "fdatasync", "write", "fdatasync-idle", "background-commit")
				wantFigures(t, w, "background_commits", "p50_ratio", "p99_ratio")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.workload, func(t *testing.T) {
			t.Parallel()
			d := dirWithPrecious(t)
			before := snapshot(t, d)
			args := append([]string{"disk", tc.workload, "--dir", d, "-o", "json"}, tc.args...)
			res := runBin(t, runOpts{}, args...)
			if res.code != exitOK && res.code != exitFail {
				t.Fatalf("exit code %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
			}
			if res.stderr != "" {
				t.Errorf("stderr not empty:\n%s", res.stderr)
			}
			r := parseDiskReport(t, res.stdout)
			if len(r.Workloads) != 1 {
				t.Fatalf("workloads %q, want only %s", r.workloadNames(), tc.workload)
			}
			if failed := r.Status == "FAIL"; failed != (res.code == exitFail) {
				t.Errorf("status %q does not match exit code %d", r.Status, res.code)
			}
			w := r.Workloads[0]
			if w.Name != tc.workload {
				t.Errorf("workload %q, want %q", w.Name, tc.workload)
			}
			if w.Ops <= 0 {
				t.Errorf("%d ops, want a positive number", w.Ops)
			}
			tc.check(t, &w)
			checkNoScratch(t, d)
			checkSnapshot(t, d, before)
		})
	}
	t.Run("snapshot text", func(t *testing.T) {
		t.Parallel()
		d := dirWithPrecious(t)
		before := snapshot(t, d)
		res := runBin(t, runOpts{}, "disk", "snapshot", "--dir", d, "--size", "4m")
		if res.code != exitOK && res.code != exitFail {
			t.Fatalf("exit code %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
		}
		for _, want := range []string{"snapshot: ", "bandwidth to write a snapshot durably", "\nResult: "} {
			if !strings.Contains(res.stdout, want) {
				t.Errorf("stdout does not contain %q:\n%s", want, res.stdout)
			}
		}
		checkNoScratch(t, d)
		checkSnapshot(t, d, before)
	})
}

func wantLatencies(t *testing.T, w *diskWorkload, names ...string) {
	t.Helper()
	got, _, _ := w.names()
	for _, n := range names {
		if !slices.Contains(got, n) {
			t.Errorf("%s has no latency %q; it has %q", w.Name, n, got)
		}
	}
}

func wantFigures(t *testing.T, w *diskWorkload, names ...string) {
	t.Helper()
	_, got, _ := w.names()
	for _, n := range names {
		if !slices.Contains(got, n) {
			t.Errorf("%s has no figure %q; it has %q", w.Name, n, got)
		}
	}
}

func wantVerdicts(t *testing.T, w *diskWorkload, checks ...string) {
	t.Helper()
	_, _, got := w.names()
	for _, c := range checks {
		if !slices.Contains(got, c) {
			t.Errorf("%s has no verdict %q; it has %q", w.Name, c, got)
		}
	}
}

// TestDiskAllQuick runs every workload with the quick preset (about 15 s)
// and checks the combined report.
func TestDiskAllQuick(t *testing.T) {
	t.Parallel()
	d := dirWithPrecious(t)
	before := snapshot(t, d)
	res := runBin(t, runOpts{}, "disk", "all", "--quick", "--dir", d, "-o", "json")
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit code %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
	}
	if res.stderr != "" {
		t.Errorf("stderr not empty:\n%s", res.stderr)
	}
	checkNoScratch(t, d)
	checkSnapshot(t, d, before)

	r := parseDiskReport(t, res.stdout)
	if got := r.workloadNames(); !slices.Equal(got, allOrder) {
		t.Fatalf("workloads %q, want %q", got, allOrder)
	}
	if r.Interrupted {
		t.Errorf("report marked interrupted")
	}
	failed := false
	for _, w := range r.Workloads {
		for _, v := range w.Verdicts {
			failed = failed || v.Status == "FAIL"
		}
	}
	if failed != (res.code == exitFail) || failed != (r.Status == "FAIL") {
		t.Errorf("exit code %d and status %q, but a verdict failed: %v", res.code, r.Status, failed)
	}

	// wal-under-load compares with the idle WAL measured just before, not a
	// new measurement: its idle latency is the wal workload's fdatasync.
	wal, wul := &r.Workloads[0], &r.Workloads[2]
	idle, sync := wul.latency("fdatasync-idle"), wal.latency("fdatasync")
	switch {
	case sync == nil:
		t.Errorf("the wal workload has no fdatasync latency")
	case idle == nil:
		t.Errorf("wal-under-load has no fdatasync-idle latency")
	case idle.at(99) != sync.at(99) || idle.Count != sync.Count || idle.at(99) <= 0:
		t.Errorf("wal-under-load's fdatasync-idle (p99 %d ns, %d samples) is not the wal workload's fdatasync (p99 %d ns, %d samples)",
			idle.at(99), idle.Count, sync.at(99), sync.Count)
	}

	// The text report of the same result (what -o text prints) has the
	// combined verdict table: one row per verdict, naming its workload.
	full, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := report.Text(&buf, full); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	_, table, ok := strings.Cut(text, "\nverdicts\n")
	if !ok {
		t.Fatalf("the text report has no verdicts section:\n%s", text)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := strings.Split(table, "\n")
	for _, w := range full.Workloads {
		for _, v := range w.Verdicts {
			found := false
			for _, row := range rows {
				found = found || strings.Contains(row, " "+w.Name+" ") && strings.Contains(row, v.Title)
			}
			if !found {
				t.Errorf("the verdicts section has no row for %s %q:\n%s", w.Name, v.Title, table)
			}
		}
	}
	if !strings.Contains(text, "\nResult: "+r.Status+"\n") {
		t.Errorf("the text report does not end with Result: %s:\n%s", r.Status, text)
	}
}

// TestDiskAllInterrupted sends SIGINT to `disk all --quick` while one of the
// workloads after wal runs: the run must stop with 130, leave nothing
// behind, and report the workloads so far, marked interrupted.
func TestDiskAllInterrupted(t *testing.T) {
	t.Parallel()
	// The file each target prepares before its timed part, and its size.
	quick, err := disk.PresetNamed("quick")
	if err != nil {
		t.Fatal(err)
	}
	prepared := map[string]struct {
		file string
		size int64
	}{"backend": {"db", quick.Backend.DBSize}, "mixed": {"data", quick.Mixed.Size}}
	for _, target := range []string{"backend", "mixed"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			d := dirWithPrecious(t)
			before := snapshot(t, d)
			p := start(t, runOpts{}, "disk", "all", "--quick", "--dir", d, "-o", "json")
			sd := waitScratch(t, p, d)
			sub := filepath.Join(sd, target)
			testutil.WaitFor(t, 60*time.Second, "the "+target+" workload to start", func() bool {
				if p.exited() {
					t.Fatalf("etcdbench exited before the %s workload started: %+v", target, p.res)
				}
				_, err := os.Stat(sub)
				return err == nil
			})
			// Past its preparation (writing its file) into the timed
			// part (both run for at least 2 s with the quick preset),
			// which writes to the file again.
			waitRewritten(t, p, filepath.Join(sub, prepared[target].file), prepared[target].size)
			p.signal(t, syscall.SIGINT)
			res := p.wait(t)
			if res.code != exitInterrupted {
				t.Errorf("exit code %d, want %d; stderr:\n%s", res.code, exitInterrupted, res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			if !strings.Contains(res.stderr, "interrupted") {
				t.Errorf("stderr does not say the run was interrupted: %s", res.stderr)
			}
			checkNoScratch(t, d)
			checkSnapshot(t, d, before)

			r := parseDiskReport(t, res.stdout)
			if !r.Interrupted {
				t.Errorf("the JSON report is not marked interrupted")
			}
			if r.Status != "" {
				t.Errorf("an interrupted run has overall status %s, want none", r.Status)
			}
			want := allOrder[:slices.Index(allOrder, target)+1]
			if got := r.workloadNames(); !slices.Equal(got, want) {
				t.Fatalf("workloads %q, want %q (the ones before %s and its partial result)", got, want, target)
			}
			if v := r.Workloads[len(want)-1].Verdicts; len(v) != 0 {
				t.Errorf("the interrupted %s workload has %d verdicts, want none", target, len(v))
			}
		})
	}
}
