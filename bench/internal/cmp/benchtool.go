package cmp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultBenchmarkVersions are the etcd versions BuildBenchmark tries by
// default: the etcd of go.mod first (its tools module is not on the module
// proxy as of v3.7.3), then the one seen to build.
var DefaultBenchmarkVersions = []string{"v3.7.3", "v3.6.5"}

// goCmd runs the go command in dir with extra environment variables.
func goCmd(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return b, ctx.Err()
	}
	return b, err
}

// BenchmarkPkg is etcd's benchmark tool.
const BenchmarkPkg = "go.etcd.io/etcd/v3/tools/benchmark"

// BuildBenchmark builds etcd's benchmark tool into binDir: for each
// version, `go install PKG@VERSION`, and when that is refused (the module
// go.etcd.io/etcd/v3 has replace directives, so go install pkg@version
// fails for v3.6.x) a build inside a throwaway module that requires the
// etcd modules of that version. Its source stays in the module cache.
func BuildBenchmark(ctx context.Context, versions []string, binDir string, stderr io.Writer) (path, version string, err error) {
	out := filepath.Join(binDir, "benchmark")
	var errs []error
	for _, v := range versions {
		fmt.Fprintf(stderr, "building etcd's benchmark tool %s ...\n", v)
		b, ierr := goCmd(ctx, binDir, []string{"GOBIN=" + binDir, "GOFLAGS=-mod=mod"}, "install", BenchmarkPkg+"@"+v)
		if ierr == nil {
			return out, v, nil
		}
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		errs = append(errs, fmt.Errorf("go install %s@%s: %w%s", BenchmarkPkg, v, ierr, Tail(b)))
		b, merr := buildInModule(ctx, v, out)
		if merr == nil {
			return out, v, nil
		}
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		errs = append(errs, fmt.Errorf("building %s %s in a throwaway module: %w%s", BenchmarkPkg, v, merr, Tail(b)))
	}
	return "", "", fmt.Errorf("could not build etcd's benchmark tool (pass --benchmark PATH): %w", errors.Join(errs...))
}

// buildInModule builds benchmark version v into out from a temporary
// module requiring go.etcd.io/etcd/v3 and its sibling modules at v.
func buildInModule(ctx context.Context, v, out string) ([]byte, error) {
	mod, err := os.MkdirTemp("", "benchmark-mod-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(mod)
	files := map[string]string{
		"go.mod":   "module benchmarkbuild\n\ngo 1.24\n",
		"tools.go": "//go:build tools\n\npackage tools\n\nimport _ \"" + BenchmarkPkg + "\"\n",
	}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(mod, f), []byte(s), 0o644); err != nil {
			return nil, err
		}
	}
	get := []string{"get", BenchmarkPkg + "@" + v}
	for _, m := range []string{"api/v3", "client/v3", "client/pkg/v3", "server/v3", "pkg/v3"} {
		get = append(get, "go.etcd.io/etcd/"+m+"@"+v)
	}
	env := []string{"GOFLAGS=-mod=mod", "GOWORK=off"}
	if b, err := goCmd(ctx, mod, env, get...); err != nil {
		return b, err
	}
	return goCmd(ctx, mod, env, "build", "-o", out, BenchmarkPkg)
}

// ToolReport is what either tool says about one run of puts.
type ToolReport struct {
	Requests  int64         // requests the tool counted (benchmark: from its histogram)
	Total     time.Duration // the tool's own timed part
	OpsPerSec float64
	// Percentiles are latency percentiles by p (50, 99, ...).
	Percentiles map[float64]time.Duration
	Errors      int64 // failed requests
	// Slowest and Stddev are benchmark's own over every request (its
	// "Slowest:" and "Stddev:" lines; 0 when absent): what etcdctl check
	// perf judges beside the rate (slowest at most 0.5 s, stddev at most
	// 0.1 s).
	Slowest, Stddev time.Duration
}

// ParseBenchmark reads the text etcd's tools/benchmark prints after a put
// run (its "Summary:" report, with or without --precise):
//
//	Summary:
//	  Total:	0.1922 secs.
//	  ...
//	  Requests/sec:	10403.6863
//	Response time histogram:
//	  0.0015 [1]	|
//	  ...
//	Latency distribution:
//	  10% in 0.0047 secs.
//	  ...
//	  99% in 0.0182 secs.
//	Error distribution:
//	  [3]	context deadline exceeded
//
// Requests/sec and the 50 % and 99 % lines are required.
func ParseBenchmark(b []byte) (ToolReport, error) {
	r := ToolReport{Percentiles: map[float64]time.Duration{}}
	haveRate := false
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case strings.HasSuffix(line, ":") && !strings.Contains(line, "\t"):
			section = strings.TrimSuffix(line, ":")
			continue
		}
		switch section {
		case "Summary":
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			v = strings.TrimSuffix(strings.TrimSpace(v), " secs.")
			switch k {
			case "Requests/sec":
				x, err := parseNonNeg(v)
				if err != nil {
					return r, fmt.Errorf("benchmark's Requests/sec %q: %w", v, err)
				}
				r.OpsPerSec, haveRate = x, true
			case "Total", "Slowest", "Stddev":
				d, err := parseSecs(v)
				if err != nil {
					return r, fmt.Errorf("benchmark's %s %q: %w", k, v, err)
				}
				switch k {
				case "Total":
					r.Total = d
				case "Slowest":
					r.Slowest = d
				default:
					r.Stddev = d
				}
			}
		case "Response time histogram":
			// "0.0015 [123]	|∎∎∎"
			_, rest, ok := strings.Cut(line, "[")
			if !ok {
				continue
			}
			n, _, ok := strings.Cut(rest, "]")
			if c, err := strconv.ParseInt(n, 10, 64); ok && err == nil && c >= 0 {
				r.Requests += c
			}
		case "Latency distribution":
			// "99.9% in 0.0196 secs."
			p, v, ok := strings.Cut(line, "% in ")
			if !ok {
				continue
			}
			pf, err := parseNonNeg(p)
			if err != nil || pf > 100 {
				return r, fmt.Errorf("benchmark's latency line %q: bad percentile", line)
			}
			d, err := parseSecs(strings.TrimSuffix(v, " secs."))
			if err != nil {
				return r, fmt.Errorf("benchmark's latency line %q: %w", line, err)
			}
			r.Percentiles[pf] = d
		case "Error distribution":
			// "[3]	context deadline exceeded"
			if n, _, ok := strings.Cut(strings.TrimPrefix(line, "["), "]"); ok {
				if c, err := strconv.ParseInt(n, 10, 64); err == nil && c > 0 {
					r.Errors += c
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return r, fmt.Errorf("reading benchmark's output: %w", err)
	}
	if !haveRate {
		return r, errors.New("benchmark's output has no Requests/sec line")
	}
	for _, p := range []float64{50, 99} {
		if _, ok := r.Percentiles[p]; !ok {
			return r, fmt.Errorf("benchmark's output has no %g%% latency line", p)
		}
	}
	return r, nil
}

// parseNonNeg parses a finite float >= 0.
func parseNonNeg(s string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return 0, fmt.Errorf("%q is not a finite number >= 0", s)
	}
	return x, nil
}

// parseSecs parses seconds such as "0.0027" into a duration (up to about
// 290 years).
func parseSecs(s string) (time.Duration, error) {
	x, err := parseNonNeg(s)
	if err != nil {
		return 0, err
	}
	if x > float64(math.MaxInt64)/1e9 {
		return 0, fmt.Errorf("%q seconds is too long", s)
	}
	return time.Duration(math.Round(x * 1e9)), nil
}

// RatePut is one open-loop run of etcd's benchmark put: Rate puts/s for
// Dur from Clients clients on Conns connections to Endpoint, new keys of
// KeySize bytes (out of a billion) with values of ValSize.
type RatePut struct {
	Endpoint         string
	Conns, Clients   int
	Rate             float64
	Dur              time.Duration
	KeySize, ValSize int
}

// Total is how many puts the run asks for.
func (p RatePut) Total() int64 { return int64(p.Rate * p.Dur.Seconds()) }

// Args are benchmark's arguments for p (--precise latencies).
func (p RatePut) Args() []string {
	return []string{"--endpoints", p.Endpoint, "--conns", strconv.Itoa(p.Conns), "--clients", strconv.Itoa(p.Clients), "--precise",
		"put", "--rate", strconv.Itoa(int(p.Rate)), "--total", strconv.FormatInt(p.Total(), 10),
		"--key-size", strconv.Itoa(p.KeySize), "--val-size", strconv.Itoa(p.ValSize), "--key-space-size", "1000000000"}
}

// RatePutRun is what one RatePut run gave.
type RatePutRun struct {
	Report ToolReport
	CPU    time.Duration // benchmark's (its rusage)
	Wall   time.Duration
	// TimedOut says it did not finish within twice its time (and 10 s)
	// and was stopped; Broken why its report is missing or incomplete
	// ("" when whole).
	TimedOut bool
	Broken   string
}

// RunRatePut runs p with the benchmark binary at bench. A rate far past
// what etcd carries would take Total/achieved seconds: the run is stopped
// at twice its time plus 10 s (TimedOut). benchmark prints only the
// percentiles its requests fill (no 99 % line under 100 requests): only
// a missing rate makes the report Broken.
func RunRatePut(ctx context.Context, bench string, p RatePut) (RatePutRun, error) {
	sctx, cancel := context.WithTimeout(ctx, 2*p.Dur+10*time.Second)
	defer cancel()
	ch, err := RunChild(sctx, nil, bench, p.Args()...)
	r := RatePutRun{Wall: ch.Wall, CPU: ch.CPU}
	switch {
	case ctx.Err() != nil:
		return r, ctx.Err()
	case sctx.Err() != nil:
		r.TimedOut, r.Broken = true, "benchmark did not finish in time"
		return r, nil
	case err != nil:
		return r, err
	}
	rep, err := ParseBenchmark(ch.Stdout)
	r.Report = rep
	if err != nil && rep.OpsPerSec == 0 {
		r.Broken = fmt.Sprintf("benchmark's summary: %v%s", err, Tail(ch.Stdout))
	}
	return r, nil
}
