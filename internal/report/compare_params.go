package report

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ParamDifference is a parameter of a workload whose value is not the same
// in every compared run.
type ParamDifference struct {
	Workload  string `json:"workload"`
	Parameter string `json:"parameter"`
	// Values are each run's value as JSON text, "" where the run has no
	// such parameter.
	Values []string `json:"values"`
}

// expectedToDiffer are the workload parameters that may differ between the
// compared runs without a warning, with why: two disks or two tunings
// legitimately differ in them. Every other parameter (block size, clients,
// connections, value size, rate, engine, iodepth, threshold...) shapes the
// load or the verdict, and a difference in it is listed.
var expectedToDiffer = []struct {
	why   string
	names []string
}{
	{"they name the run, its files, its endpoints or its job", []string{
		"endpoints", "key_prefix", "source", "log", "members", "pid", "strace_version", "rules",
		"fio_command", "jobs", "group", "entries", "exact_histogram", "preset_source"}},
	{"they set how long the run went and how sure its statistics are; the figures stay comparable, the p99s with their confidence intervals", []string{
		"mode", "runtime_ns", "min_duration_ns", "min_samples", "size", "count", "total", "duration_ns",
		"preset_duration_ns", "random_runtime_ns", "window_s", "since_start", "confidence", "quantile"}},
	{"they are what etcdbench tune varies, the point of comparing its runs", []string{
		"tune_combination", "tune_settings", "tune_round", "tune_order"}},
}

// expectedToDifferSet is expectedToDiffer by name.
var expectedToDifferSet = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range expectedToDiffer {
		for _, n := range e.names {
			m[n] = true
		}
	}
	return m
}()

// addDifferences lists the parameters of workload w that are not the same
// in every run, leaving out those expected to differ.
func (c *Comparison) addDifferences(w int) {
	names := map[string]bool{}
	for _, r := range c.r {
		for k := range r.Workloads[w].Parameters {
			if !expectedToDifferSet[k] {
				names[k] = true
			}
		}
	}
	for _, k := range sortedKeys(names) {
		vals := make([]string, len(c.r))
		same := true
		for i, r := range c.r {
			if v, ok := r.Workloads[w].Parameters[k]; ok {
				// As JSON text, a value read back from a file (a float64)
				// equals the one a run set (an int).
				b, err := json.Marshal(v)
				if err != nil {
					b = []byte(fmt.Sprint(v))
				}
				vals[i] = string(b)
			}
			same = same && vals[i] == vals[0]
		}
		if !same {
			c.Differences = append(c.Differences, ParamDifference{Workload: c.r[0].Workloads[w].Name, Parameter: k, Values: vals})
		}
	}
}

// differenceLines says each difference in words, "wal block_size: A 2300,
// B 65536".
func (c *Comparison) differenceLines() []string {
	var out []string
	for _, d := range c.Differences {
		var vals []string
		for i, v := range d.Values {
			if v == "" {
				v = "(none)"
			}
			vals = append(vals, c.Runs[i].Label+" "+v)
		}
		out = append(out, fmt.Sprintf("%s %s: %s", d.Workload, d.Parameter, strings.Join(vals, ", ")))
	}
	return out
}

// differenceWarning heads the list of differences.
const differenceWarning = "the runs differ in parameters that shape the load or its verdicts, so their figures differ for that reason too"
