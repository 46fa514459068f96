package cmp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Result is a comparison's committed result file,
// bench/<name>/results/<date>.json: the figures README.md and
// bench/README.md quote, by name, and the summary table as the comparison
// printed it, with what a reader needs to weigh them (the machine, its
// load, the rounds). cmd/etcdbench's TestDocsFigures fails when a quoted
// figure or table differs from its file.
type Result struct {
	Bench string `json:"bench"`
	Date  string `json:"date"` // YYYY-MM-DD
	// Source says where the figures come from: a run of the comparison
	// (its command line), or the README table they were transcribed from.
	Source  string `json:"source"`
	Machine string `json:"machine,omitempty"`
	// Load is the 1-minute load average at the start and at the end of a
	// run (nil when transcribed and not recorded; LoadNote then says what
	// the README said of it).
	Load     *[2]float64 `json:"load_average,omitempty"`
	LoadNote string      `json:"load_note,omitempty"`
	Rounds   int         `json:"rounds"`
	// Figures are the quoted figures by name; a comparison's rows give
	// RowFigures' names.
	Figures map[string]float64 `json:"figures"`
	// Table is the summary table as printed (no code fence).
	Table string `json:"table,omitempty"`
}

// ReadResult reads a result file.
func ReadResult(path string) (Result, error) {
	var r Result
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if r.Bench == "" || r.Date == "" || r.Source == "" || r.Figures == nil {
		return r, fmt.Errorf("%s: a result file needs bench, date, source and figures", path)
	}
	return r, nil
}

// RowFigures names the figures of rows: for each row, its pair and metric
// as a slug ("etcdbench_fio_fdatasync_p99", or "fdatasync_p99" without a
// pair) followed by _ratio (the median ratio), _ratio_min, _ratio_max,
// _fio and _etcdbench (the medians of either side; _fio is the baseline
// tool's, benchmark's in put-vs-etcd-benchmark).
func RowFigures(rows []Row) map[string]float64 {
	out := map[string]float64{}
	for _, r := range rows {
		k := Slug(strings.TrimSpace(r.Pair + " " + r.Metric))
		out[k+"_ratio"] = float64(r.Ratio)
		out[k+"_ratio_min"] = float64(r.RatioMin)
		out[k+"_ratio_max"] = float64(r.RatioMax)
		out[k+"_fio"] = r.Fio
		out[k+"_etcdbench"] = r.Etcd
	}
	return out
}

// Slug keeps the lower-case letters and digits of s, one underscore for
// each run of anything else.
func Slug(s string) string {
	var b strings.Builder
	under := false
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(c)
			under = false
		} else {
			under = true
		}
	}
	return b.String()
}

// Machine describes the machine of a run for its result file: its CPUs
// and kernel, and the filesystem of dir.
func Machine(dir string) string {
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	fs := "unknown filesystem"
	if b, err := os.ReadFile("/proc/self/mounts"); err == nil {
		best := ""
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 3 && strings.HasPrefix(dir, f[1]) && len(f[1]) >= len(best) {
				best, fs = f[1], f[2]+" on "+f[0]
			}
		}
	}
	return fmt.Sprintf("%d CPUs, Linux %s, %s", runtime.NumCPU(), strings.TrimSpace(string(kernel)), fs)
}

// LoadAverage is the machine's 1-minute load average (/proc/loadavg).
func LoadAverage() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("/proc/loadavg is empty")
	}
	return strconv.ParseFloat(f[0], 64)
}

// SaveResult writes r into dir (--results) as <date>.json (<date>-2.json
// and so on when that exists), the date of the run's start, with the load average at the end; an empty dir writes
// nothing. start is the load average at the start.
func SaveResult(dir string, r Result, start float64, began time.Time) error {
	if dir == "" {
		return nil
	}
	end, err := LoadAverage()
	if err != nil {
		return fmt.Errorf("--results: %w", err)
	}
	r.Load = &[2]float64{start, end}
	r.Date = began.UTC().Format(time.DateOnly)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--results: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the table's "<= 1.00" stays readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("--results: %w", err)
	}
	// A second run the same day gets its own file.
	path := filepath.Join(dir, r.Date+".json")
	for i := 2; ; i++ {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			break
		}
		path = filepath.Join(dir, fmt.Sprintf("%s-%d.json", r.Date, i))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--results: %w", err)
	}
	return nil
}
