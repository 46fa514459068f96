package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/fio"
	"etcdbench/internal/units"
)

// baselineRuntime is the --runtime of fio's prepare-only run: fio starts,
// forks its jobs, issues one queue's worth of I/O and stops. Its CPU time
// (fio's start-up, 0.17-0.26 s) is subtracted from the measured run's;
// fio's file is laid out by this program, outside fio. etcdbench needs no
// such run: it reports the CPU of its timed part itself
// (cmp.Measurement.IOCPU says why that is the fairer figure for it).
const baselineRuntime = "1ms"

// fioFile is the one file all of fio's jobs share, in a fresh
// subdirectory per run, as etcdbench's jobs share its one "data" file.
const fioFile = "mixed.dat"

// runner runs the two tools on one directory with one job.
type runner struct {
	fio, etcdbench string // executables
	dir            string // directory under test
	p              params
}

// fioArgs is fio's mixed job. With the psync engine, which has one I/O in
// flight per job, it runs numjobs x iodepth jobs of depth 1: the same
// number in flight as etcdbench's psync engine, which runs one goroutine
// per I/O in flight.
func (r runner) fioArgs(sub, engine, runtime string) []string {
	jobs, depth := r.p.NumJobs, r.p.IODepth
	if engine == "psync" {
		jobs, depth = jobs*depth, 1
	}
	return []string{"--name=mixed", "--directory=" + sub, "--filename=" + fioFile,
		"--rw=randrw", "--rwmixread=" + strconv.Itoa(r.p.RWMixRead), "--bs=" + r.p.BS,
		"--direct=1", "--ioengine=" + engine, "--iodepth=" + strconv.Itoa(depth), "--numjobs=" + strconv.Itoa(jobs),
		"--size=" + r.p.Size, "--runtime=" + runtime, "--time_based", "--group_reporting",
		"--output-format=json"}
}

// runFio lays out fio's file in a fresh subdirectory of the directory under
// test, runs the prepare-only job and then the measured one on it, and
// removes the subdirectory.
func (r runner) runFio(ctx context.Context, engine string) (m cmp.Measurement, raw json.RawMessage, err error) {
	sub, done, err := cmp.TempSub(r.dir, "mixedvsfio-fio-")
	if err != nil {
		return m, nil, err
	}
	defer done(&err)
	size, err := units.ParseSize(r.p.Size)
	if err != nil {
		return m, nil, err
	}
	if err := cmp.Layout(filepath.Join(sub, fioFile), size); err != nil {
		return m, nil, err
	}
	bc, err := cmp.RunChild(ctx, nil, r.fio, r.fioArgs(sub, engine, baselineRuntime)...)
	if err != nil {
		return m, nil, err
	}
	base, err := parseFio(bc.Stdout)
	if err != nil {
		return m, nil, fmt.Errorf("prepare-only run: %w", err)
	}
	c, err := cmp.RunChild(ctx, nil, r.fio, r.fioArgs(sub, engine, r.p.Runtime)...)
	if err != nil {
		return m, nil, err
	}
	if m, err = parseFio(c.Stdout); err != nil {
		return m, nil, err
	}
	m.Tool = cmp.ToolFio
	m.FromChild(c)
	m.Base = &cmp.Baseline{Ops: base.Ops, Bytes: base.Bytes, CPU: bc.CPU, Wall: bc.Wall}
	return m, cmp.RawJSON(c.Stdout), nil
}

// fioTimes is the part of fio's report that internal/fio does not read:
// completion-latency percentiles and per-direction runtimes.
type fioTimes struct {
	Jobs []struct {
		Read struct {
			Runtime int64 `json:"runtime"` // ms
			Clat    struct {
				Percentile map[string]int64 `json:"percentile"`
			} `json:"clat_ns"`
		} `json:"read"`
		Write struct {
			Runtime int64 `json:"runtime"`
		} `json:"write"`
	} `json:"jobs"`
}

// parseFio reads fio's group-reported JSON: I/Os, bytes and IOPS of both
// directions, the read p99 of completion latency (clat, from submission
// to completion: what etcdbench's read latencies time, see
// internal/disk.runUringJobs) and the run time.
func parseFio(b []byte) (cmp.Measurement, error) {
	doc, err := fio.Parse(b)
	if err != nil {
		return cmp.Measurement{}, fmt.Errorf("reading fio's JSON report: %w", err)
	}
	if len(doc.Jobs) != 1 {
		return cmp.Measurement{}, fmt.Errorf("fio reported %d jobs, want 1 (was --group_reporting lost?)", len(doc.Jobs))
	}
	j := doc.Jobs[0]
	if j.Error != 0 {
		return cmp.Measurement{}, fmt.Errorf("fio job %q reports error %d", j.Name, j.Error)
	}
	m := cmp.Measurement{
		Ops:     j.Read.TotalIOs + j.Write.TotalIOs,
		Bytes:   j.Read.IOBytes + j.Write.IOBytes,
		Figures: map[string]float64{"iops": j.Read.IOPS + j.Write.IOPS},
	}
	if m.Ops <= 0 {
		return m, errors.New("fio did no I/O")
	}
	var t fioTimes
	if err := cmp.DecodeFirst(b, &t); err != nil || len(t.Jobs) == 0 {
		return m, fmt.Errorf("reading fio's runtimes and clat: %v", err)
	}
	tj := t.Jobs[0]
	if j.Read.TotalIOs > 0 {
		p99, ok := tj.Read.Clat.Percentile["99.000000"]
		if !ok {
			return m, errors.New(`fio's read clat_ns has no "99.000000" percentile (was --percentile_list or --clat_percentiles changed?)`)
		}
		m.Figures["read_p99_ns"] = float64(p99)
	}
	// With group_reporting, job_runtime adds up the jobs; each direction's
	// runtime is the group's wall time.
	m.Runtime = time.Duration(max(tj.Read.Runtime, tj.Write.Runtime)) * time.Millisecond
	return m, nil
}

// etcdbenchArgs is `etcdbench disk mixed` with the job's parameters.
func (r runner) etcdbenchArgs(engine, runtime string) []string {
	return []string{"disk", "mixed", "--dir", r.dir, "--bs", r.p.BS, "--size", r.p.Size, "--runtime", runtime,
		"--numjobs", strconv.Itoa(r.p.NumJobs), "--iodepth", strconv.Itoa(r.p.IODepth),
		"--rwmixread", strconv.Itoa(r.p.RWMixRead), "--engine", engine, "-o", "json", "--no-progress"}
}

// runEtcdbench runs `etcdbench disk mixed`, which creates and removes its
// own scratch directory in the directory under test.
func (r runner) runEtcdbench(ctx context.Context, engine string) (cmp.Measurement, json.RawMessage, error) {
	// Exit 1 means a verdict failed: the report is complete and still counts.
	c, err := cmp.RunChild(ctx, []int{1}, r.etcdbench, r.etcdbenchArgs(engine, r.p.Runtime)...)
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	m, err := parseEtcdbench(c.Stdout)
	if err != nil {
		return m, nil, fmt.Errorf("%w%s", err, cmp.Tail(c.Stderr))
	}
	if m.SelfCPU <= 0 {
		return m, nil, errors.New("etcdbench's mixed workload reports no process CPU time")
	}
	m.Tool = cmp.ToolEtcdbench
	m.FromChild(c)
	return m, cmp.RawJSON(c.Stdout), nil
}

// parseEtcdbench reads `etcdbench disk mixed -o json`: ops, bytes, its
// timed duration, read_iops + write_iops, read p99 and the CPU it measured
// for its timed part.
func parseEtcdbench(b []byte) (cmp.Measurement, error) {
	w, err := cmp.EtcdbenchWorkload(b, "mixed")
	if err != nil {
		return cmp.Measurement{}, err
	}
	m := cmp.Measurement{Ops: w.Ops, Bytes: w.Bytes, Runtime: time.Duration(w.DurationNs), SelfCPU: cmp.SelfCPU(w), Figures: map[string]float64{}}
	if m.Ops <= 0 {
		return m, errors.New("etcdbench's mixed workload did no I/O")
	}
	var iops float64
	for _, f := range []string{"read_iops", "write_iops"} {
		v, err := cmp.FigureOf(w, f)
		if err != nil {
			return m, err
		}
		iops += v
	}
	m.Figures["iops"] = iops
	if l := w.Latency("read"); l != nil && l.Count > 0 {
		p99, ok := l.At(99)
		if !ok {
			return m, errors.New("etcdbench's read latencies lack the 99th percentile")
		}
		m.Figures["read_p99_ns"] = float64(p99)
	}
	return m, nil
}
