package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/cmp/cmptest"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Rounds != 3 || !o.NoFio {
		t.Errorf("defaults %+v, want 3 rounds and no fio", o)
	}
	for _, args := range [][]string{{"--rounds", "2"}, {"--fio", "fio"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(cmp.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func TestRotate(t *testing.T) {
	abc := []string{"a", "b", "c"}
	for n, want := range map[int]string{1: "abc", 2: "bca", 3: "cab", 4: "abc"} {
		if got := strings.Join(rotate(n, abc), ""); got != want {
			t.Errorf("round %d: %s, want %s", n, got, want)
		}
	}
	if !slices.Equal(abc, []string{"a", "b", "c"}) {
		t.Errorf("rotate changed its input: %v", abc)
	}
}

func TestArgv(t *testing.T) {
	cs := commands()
	want := map[string]string{
		"capacity":      "capacity --dir D --no-progress -o json",
		"etcd capacity": "etcd capacity --dir D --no-progress -o json",
		"check":         "--dir D --no-progress -o json",
		"check --quick": "--quick --dir D --no-progress -o json",
	}
	for _, c := range cs {
		if got := strings.Join(c.argv("D"), " "); got != want[c.Name] {
			t.Errorf("%s: %q, want %q", c.Name, got, want[c.Name])
		}
		if c.Limit <= 0 || c.Source == "" {
			t.Errorf("%s: limit %v from %q", c.Name, c.Limit, c.Source)
		}
	}
	if got := strings.Join(cs[0].argv("E"), " "); !strings.HasPrefix(got, "capacity --dir E") {
		t.Errorf("a second argv shares the first one's slice: %q", got)
	}
}

// TestParseAnswer reads real results: a capacity sweep that failed at 100
// writes/s (a stall on a shared machine, exit 1) and a default check (its
// histograms and per-second series cut out to keep the file small).
func TestParseAnswer(t *testing.T) {
	tests := []struct {
		file string
		want answer
		text string
	}{
		{"capacity-fail.json", answer{Status: "FAIL", Rate: 84, Upper: 100, Unit: "writes/s", Bend: "stalls"}, "84..100 writes/s (stalls), FAIL"},
		{"check.json", answer{Status: "PASS", Rate: 14700, Unit: "writes/s", Bend: "none"}, ">= 14.7k writes/s (every step passed), PASS"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, err := parseAnswer(cmptest.ReadFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || got.String() != tc.text {
				t.Errorf("got %+v (%q), want %+v (%q)", got, got, tc.want, tc.text)
			}
		})
	}
	if _, err := parseAnswer([]byte(`{"schema":"etcdbench.result/v1","workloads":[{"name":"wal"}]}`)); !errors.Is(err, errNoCapacity) {
		t.Errorf("a result without capacity: %v, want errNoCapacity", err)
	}
	if _, err := parseAnswer([]byte("no json")); err == nil {
		t.Error("output without JSON was accepted")
	}
}

func TestSummarize(t *testing.T) {
	cs := commands()[:1] // capacity, at most 2 minutes
	run := func(round int, wall time.Duration, rate float64, status string, code int) timed {
		return timed{Command: "capacity", Round: round, Wall: wall, ExitCode: code, answer: answer{Status: status, Rate: rate, Unit: "writes/s"}}
	}
	runs := []timed{
		run(1, 100*time.Second, 1000, "PASS", 0),
		run(2, 130*time.Second, 1200, "PASS", 0),
		run(3, 90*time.Second, 800, "FAIL", 1),
		{Command: "other", Wall: time.Hour},
	}
	rows := summarize(cs, runs)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.Rounds != 3 || r.Median != 100*time.Second || r.Min != 90*time.Second || r.Max != 130*time.Second ||
		!r.Met || r.Within != 2 || r.RateMedian != 1000 || r.RateMin != 800 || r.RateMax != 1200 {
		t.Errorf("row %+v", r)
	}
	if want := []string{"PASS (exit 0) x2", "FAIL (exit 1) x1"}; !slices.Equal(r.Outcomes, want) {
		t.Errorf("outcomes %q, want %q", r.Outcomes, want)
	}
	var b strings.Builder
	if err := renderSummary(&b, 3, rows); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "capacity  1m40s  1m30s..2m10s  <= 2m0s  yes  2 of 3") {
		t.Errorf("summary:\n%s", out)
	}
}

// The result file keeps the summary's table alone and each command's
// wall times and answer by name.
func TestResultFigures(t *testing.T) {
	rows := []summaryRow{{Command: "etcd capacity", Rounds: 3, Median: 90 * time.Second, Min: 80 * time.Second, Max: 100 * time.Second,
		Limit: 3 * time.Minute, Met: true, Within: 3, RateMedian: 4800, Unit: "puts/s", Outcomes: []string{"PASS (exit 0) x3"}}}
	var b strings.Builder
	if err := renderSummary(&b, 3, rows); err != nil {
		t.Fatal(err)
	}
	table := summaryTable(b.String())
	if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "command") || !strings.HasPrefix(lines[1], "etcd capacity") {
		t.Errorf("table:\n%s", table)
	}
	f := resultFigures(rows)
	if f["etcd_capacity_wall_s"] != 90 || f["etcd_capacity_wall_min_s"] != 80 || f["etcd_capacity_wall_max_s"] != 100 || f["etcd_capacity_answer"] != 4800 {
		t.Errorf("figures %v", f)
	}
}

// check's answer is paired with capacity's of the same round; a round
// where either gave no rate is left out.
func TestAgree(t *testing.T) {
	runs := []timed{
		{Round: 1, Command: "capacity", answer: answer{Rate: 3390}}, {Round: 1, Command: "check", answer: answer{Rate: 3000}}, {Round: 1, Command: "etcd capacity", answer: answer{Rate: 9}},
		{Round: 2, Command: "check", answer: answer{Rate: 2000}}, {Round: 2, Command: "capacity", answer: answer{Rate: 3200}},
		{Round: 3, Command: "check", answer: answer{Rate: 0}}, {Round: 3, Command: "capacity", answer: answer{Rate: 3300}},
	}
	if q := agree(runs, "check --quick"); q.Rounds != 0 || q.Command != "check --quick" {
		t.Errorf("check --quick did not run, yet agreement %+v", q)
	}
	a := agree(runs, "check")
	if a.Rounds != 2 || a.Within != 1 || a.Min != 0.625 || a.Max != 3000.0/3390 {
		t.Fatalf("agreement %+v", a)
	}
	var b strings.Builder
	if err := renderAgreement(&b, a); err != nil || !strings.Contains(b.String(), "1 of 2 rounds within 1.25x") {
		t.Errorf("rendered %q (%v)", b.String(), err)
	}
}

// --from summarizes earlier --json files: their rounds numbered on, the
// agreement paired within each round.
func TestFromFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, runs []timed) string {
		f := jsonFile{Dir: dir, Commands: []command{commands()[0], commands()[3]}, Runs: runs}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.json", []timed{{Round: 1, Command: "capacity", Wall: time.Minute, answer: answer{Rate: 1000}}, {Round: 1, Command: "check --quick", Wall: time.Second, answer: answer{Rate: 900}}})
	b := write("b.json", []timed{{Round: 1, Command: "check --quick", Wall: time.Second, answer: answer{Rate: 2000}}, {Round: 1, Command: "capacity", Wall: time.Minute, answer: answer{Rate: 1000}}})
	results := filepath.Join(dir, "results")
	o, err := parseFlags([]string{"--from", a + "," + b, "--results", results}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := fromFiles(o, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2 rounds from") || !strings.Contains(out.String(), "check --quick's answer / capacity's in the same round: median 1.45 (0.90..2.00), 1 of 2 rounds within 1.25x") {
		t.Errorf("summary:\n%s", out.String())
	}
	files, err := os.ReadDir(results)
	if err != nil || len(files) != 1 {
		t.Fatalf("results: %v, %v", files, err)
	}
}
