package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
)

// pkgTime is one package's test binary: how long it ran.
type pkgTime struct {
	Package string        `json:"package"`
	Elapsed time.Duration `json:"elapsed_ns"`
	Result  string        `json:"result"` // pass, fail or skip (no test files)
}

// suiteEvents is what a suite's `go test -json` stream says.
type suiteEvents struct {
	firstStart time.Time
	packages   []pkgTime // the slowest first
	failed     []string  // the packages (and top-level tests) that failed
	// failedOutput is what the failed tests printed (their last
	// failedLines lines each, subtests apart), for the reason of a failure.
	failedOutput string
}

// failedLines bounds the output kept of each failed test.
const failedLines = 40

// parseEvents reads a `go test -json` stream: each package's start, its
// end (pass, fail or skip, with its elapsed seconds) and the tests that
// failed. Lines that are not events (a build error's text) are skipped.
func parseEvents(r io.Reader) (suiteEvents, error) {
	var s suiteEvents
	output := map[string][]string{} // package and test -> its lines
	var out strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Time    time.Time
			Action  string
			Package string
			Test    string
			Elapsed float64
			Output  string
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Action == "" {
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "output" && e.Test != "":
			output[key] = append(output[key], e.Output)
		case e.Action == "fail" && e.Test != "":
			lines := output[key]
			out.WriteString(strings.Join(lines[max(len(lines)-failedLines, 0):], ""))
		}
		if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" {
			delete(output, key)
		}
		switch {
		case e.Action == "start" && e.Test == "":
			if s.firstStart.IsZero() || e.Time.Before(s.firstStart) {
				s.firstStart = e.Time
			}
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			s.packages = append(s.packages, pkgTime{Package: e.Package, Elapsed: time.Duration(e.Elapsed * float64(time.Second)), Result: e.Action})
			if e.Action == "fail" {
				s.failed = append(s.failed, e.Package)
			}
		case e.Action == "fail" && !strings.Contains(e.Test, "/"):
			s.failed = append(s.failed, e.Package+"."+e.Test)
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	s.failedOutput = out.String()
	if len(s.packages) == 0 {
		return s, fmt.Errorf("no package finished")
	}
	slices.SortStableFunc(s.packages, func(a, b pkgTime) int { return int(b.Elapsed - a.Elapsed) })
	return s, nil
}

// slowest is how many packages a run's report lists.
const slowest = 6

// renderRun prints one run: its wall time against the limit, the compile
// before the first test and the slowest packages.
func renderRun(w io.Writer, r suiteRun) {
	verdict := "within"
	if r.Wall > limit {
		verdict = "over"
	}
	fmt.Fprintf(w, "round %d, %s cache: %s (%s the %s limit), first test after %s, exit %d\n", r.Round, r.Cache, cmp.FmtDur(r.Wall), verdict, limit, cmp.FmtDur(r.FirstTest), r.ExitCode)
	for _, p := range r.Packages[:min(slowest, len(r.Packages))] {
		fmt.Fprintf(w, "  %-50s %s\n", strings.TrimPrefix(p.Package, "etcdbench/"), cmp.FmtDur(p.Elapsed))
	}
	fmt.Fprintln(w)
}

// summarize prints, per cache, the median wall time over the rounds with
// its range and the median time to the first test, and returns the
// figures by name: suite_cold_s, suite_cold_min_s, suite_cold_max_s,
// first_test_cold_s (and the same for warm).
func summarize(w io.Writer, runs []suiteRun) map[string]float64 {
	figures := map[string]float64{}
	fmt.Fprintf(w, "cache  rounds  suite median [range]          first test  limit %s\n", limit)
	for _, c := range []string{"cold", "warm"} {
		var walls, firsts []float64
		for _, r := range runs {
			if r.Cache == c {
				walls, firsts = append(walls, r.Wall.Seconds()), append(firsts, r.FirstTest.Seconds())
			}
		}
		if len(walls) == 0 {
			continue
		}
		med, fm := cmp.Median(walls), cmp.Median(firsts)
		lo, hi := cmp.MinMax(walls)
		figures["suite_"+c+"_s"], figures["suite_"+c+"_min_s"], figures["suite_"+c+"_max_s"], figures["first_test_"+c+"_s"] = med, lo, hi, fm
		met := "within"
		if med > limit.Seconds() {
			met = "over"
		}
		fmt.Fprintf(w, "%-5s  %6d  %-8s [%s..%s]  %-10s  %s\n", c, len(walls), secs(med), secs(lo), secs(hi), secs(fm), met)
	}
	fmt.Fprintf(w, "limit: %s\n", limitSource)
	return figures
}

func secs(s float64) string { return cmp.FmtDur(time.Duration(s * float64(time.Second))) }
