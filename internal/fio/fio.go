// Package fio reads the JSON output of fio (--output-format=json), so that
// etcdbench can compare itself with fio's etcd recipe and, later, judge a
// fio run with etcdbench's verdicts. Parsing is a pure function over bytes.
package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ErrNoJobs is returned for output that holds no job.
var ErrNoJobs = errors.New("fio: output has no jobs")

// Output is the part of fio's JSON output etcdbench uses.
type Output struct {
	Version string `json:"fio version"`
	Jobs    []Job  `json:"jobs"`
}

// Job is one job (or one group, with group_reporting) of a fio run.
type Job struct {
	Name      string  `json:"jobname"`
	Error     int     `json:"error"`
	RuntimeMs int64   `json:"job_runtime"`
	UsrCPU    float64 `json:"usr_cpu"` // percent of the job's runtime
	SysCPU    float64 `json:"sys_cpu"`
	Write     IO      `json:"write"`
	Read      IO      `json:"read"`
	Sync      *Sync   `json:"sync"` // nil from fio < 3.5, which has no sync latencies
}

// IO is fio's per-direction statistics.
type IO struct {
	IOBytes  int64   `json:"io_bytes"`
	TotalIOs int64   `json:"total_ios"`
	IOPS     float64 `json:"iops"`
	Lat      Lat     `json:"lat_ns"`
}

// Sync is fio's fsync/fdatasync statistics (fio >= 3.5).
type Sync struct {
	TotalIOs int64 `json:"total_ios"`
	Lat      Lat   `json:"lat_ns"`
}

// Lat is a latency distribution in nanoseconds. Percentile keys are fio's
// strings such as "99.000000".
type Lat struct {
	N          int64            `json:"N"`
	Min        int64            `json:"min"`
	Max        int64            `json:"max"`
	Mean       float64          `json:"mean"`
	Percentile map[string]int64 `json:"percentile"`
}

// At returns the latency at percentile p (e.g. 99) in nanoseconds.
func (l Lat) At(p float64) (int64, bool) {
	v, ok := l.Percentile[strconv.FormatFloat(p, 'f', 6, 64)]
	return v, ok
}

// Parse reads fio's JSON output. fio may print warnings before the JSON
// object; everything before the first '{' and after the object is skipped.
func Parse(b []byte) (*Output, error) {
	start := bytes.IndexByte(b, '{')
	if start < 0 {
		return nil, errors.New("fio: no JSON object in output")
	}
	var o Output
	if err := json.NewDecoder(bytes.NewReader(b[start:])).Decode(&o); err != nil {
		return nil, fmt.Errorf("fio: parsing JSON output: %w", err)
	}
	if len(o.Jobs) == 0 {
		return nil, ErrNoJobs
	}
	return &o, nil
}
