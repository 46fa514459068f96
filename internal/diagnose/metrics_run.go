package diagnose

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// MetricsSpec is one validated `diagnose metrics`: the members' live
// /metrics, or saved scrapes.
type MetricsSpec struct {
	// Targets are the members to scrape twice, Window apart, with Client.
	Targets []Target
	Client  *http.Client
	// Files are saved scrapes instead: one (since the processes started)
	// or two (before and after), each FILE or FILE,FILE,... in the
	// members' order.
	Files  []string
	Window time.Duration
	Args   []string
}

// Metrics gathers the evidence, diagnoses it with the rules and returns
// the diagnosis as a result. A file that cannot be read or parsed is a
// usage error.
func Metrics(ctx context.Context, s MetricsSpec) (*result.Result, error) {
	res := run.NewResult(s.Args)
	cores := float64(runtime.NumCPU())
	var ev Evidence
	var err error
	if len(s.Files) == 0 {
		ev, err = Collect(ctx, s.Client, s.Targets, s.Window, cores)
	} else {
		ev, err = readScrapes(s.Files, s.Window, cores)
	}
	if err != nil {
		return nil, err
	}
	rules := Rules()
	fs := Diagnose(ev, verdict.DiagnoseDefaults(), rules)
	w := Workload("diagnose-metrics", ev, fs, rules)
	w.Notes = append(w.Notes, "the environment describes the machine etcdbench ran on, not the members")
	res.Environment = sysinfo.Collect("/", ".")
	res.Workloads = []result.Workload{w}
	res.Finish(time.Now().UTC())
	return res, nil
}

// readScrapes reads saved scrapes: each of files is one scrape of every
// member, FILE or FILE,FILE,... in the members' order; two are window
// apart, unless their files' modification times say otherwise.
func readScrapes(files []string, window time.Duration, cores float64) (Evidence, error) {
	rounds := make([][]Scrape, len(files))
	var mtimes []time.Time
	for r, list := range files {
		for i, name := range strings.Split(list, ",") {
			b, err := os.ReadFile(name)
			if err != nil {
				return Evidence{}, run.Usagef("--from %s: %v", name, errors.Unwrap(err))
			}
			sc, err := ParseScrape(fmt.Sprintf("member%d", i), name, b)
			if err != nil {
				return Evidence{}, run.Usage(err)
			}
			rounds[r] = append(rounds[r], sc)
			if st, err := os.Stat(name); err == nil && i == 0 {
				mtimes = append(mtimes, st.ModTime())
			}
		}
	}
	if len(rounds) == 1 {
		return FromScrapes(nil, rounds[0], 0, cores), nil
	}
	if len(rounds[0]) != len(rounds[1]) {
		return Evidence{}, run.Usagef("--from: %d files before and %d after: give one per member in the same order both times", len(rounds[0]), len(rounds[1]))
	}
	note := fmt.Sprintf("the two scrapes are taken to be %v apart (--window)", window)
	// Files saved by hand a window apart differ by seconds; copies
	// (checkouts, archives) by nothing useful.
	if len(mtimes) == 2 && mtimes[1].Sub(mtimes[0]) >= time.Second {
		window = mtimes[1].Sub(mtimes[0]).Round(time.Millisecond)
		note = fmt.Sprintf("the two scrapes are %v apart by their files' modification times", window)
	}
	ev := FromScrapes(rounds[0], rounds[1], window, cores)
	ev.Notes = append([]string{note}, ev.Notes...)
	return ev, nil
}
