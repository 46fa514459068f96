// Package fio reads the JSON output of fio (--output-format=json or json+),
// so that etcdbench can compare itself with fio's etcd recipe and judge a
// fio run with etcdbench's WAL verdicts: Parse is a pure function over
// bytes, Groups merges the jobs that ran together (numjobs copies, with or
// without group_reporting), Unlike names the options that make a run unlike
// etcd's WAL, and Judge turns it all into a result.Result.
package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ErrNoJobs is returned for output that holds no job.
var ErrNoJobs = errors.New("fio output has no jobs")

// Output is the part of fio's JSON output etcdbench uses.
type Output struct {
	Version string `json:"fio version"`
	// Timestamp is when fio finished, in seconds since the Unix epoch.
	Timestamp int64 `json:"timestamp"`
	// GlobalOptions are the [global] section of a job file; each job's
	// Options override them.
	GlobalOptions map[string]string `json:"global options"`
	Jobs          []Job             `json:"jobs"`
	DiskUtil      []DiskUtil        `json:"disk_util"`
}

// DiskUtil names a block device fio saw busy during the run.
type DiskUtil struct {
	Name string  `json:"name"`
	Util float64 `json:"util"` // percent
}

// Job is one job (or one group, with group_reporting) of a fio run.
type Job struct {
	Name     string `json:"jobname"`
	GroupID  int    `json:"groupid"` // jobs of one group ran together
	Error    int    `json:"error"`
	ElapsedS int64  `json:"elapsed"` // wall-clock seconds
	// Options are the options given for this job (only those set
	// explicitly); numjobs copies carry the same ones. With group_reporting
	// the one entry of a group carries its last job's.
	Options map[string]string `json:"job options"`
	// Hostname is the machine the job ran on, given only when fio ran as
	// a client of a fio server (--client).
	Hostname  string  `json:"hostname"`
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
	// BW is fio's bandwidth in bytes per second: IOBytes over the job's
	// runtime (RuntimeMs, which for a job with end_fsync ends when that
	// fsync returned).
	BW  float64 `json:"bw_bytes"`
	Lat Lat     `json:"lat_ns"`
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
	// Bins is the full latency histogram (value in ns -> count), present
	// only with --output-format=json+.
	Bins map[string]int64 `json:"bins"`
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
		return nil, errors.New("no JSON object in fio output")
	}
	var o Output
	if err := json.NewDecoder(bytes.NewReader(b[start:])).Decode(&o); err != nil {
		return nil, fmt.Errorf("parsing fio's JSON output: %w", err)
	}
	if len(o.Jobs) == 0 {
		return nil, ErrNoJobs
	}
	return &o, nil
}
