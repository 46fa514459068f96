package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/fio"
	"etcdbench/internal/units"
)

// recoveryFile is the laid-out file fio reads back.
const recoveryFile = "recovery.dat"

// runner runs the two tools on one directory.
type runner struct {
	fio, etcdbench string // executables
	dir            string // directory under test
	p              params
	warm           bool // cmp.WarmPageCache before each measured snapshot run
}

// fioSnapshotArgs writes size bytes sequentially with pwrite and fsyncs
// once at the end. fio preallocates the file first (fallocate, its
// default), which etcdbench does not.
func (r runner) fioSnapshotArgs(sub, size string) []string {
	return []string{"--name=snapshot", "--directory=" + sub, "--filename=snapshot.dat",
		"--rw=write", "--bs=" + r.p.BS, "--size=" + size, "--end_fsync=1", "--ioengine=psync",
		"--output-format=json"}
}

// fioRecoveryArgs reads the laid-out file sequentially with O_DIRECT
// pread; ioSize less than --size stops early (the prepare-only run).
func (r runner) fioRecoveryArgs(sub, ioSize string) []string {
	return []string{"--name=recovery", "--directory=" + sub, "--filename=" + recoveryFile,
		"--rw=read", "--bs=" + r.p.BS, "--direct=1", "--size=" + r.p.Size, "--io_size=" + ioSize,
		"--ioengine=psync", "--output-format=json"}
}

// runFioPair runs fio's prepare-only job (args(sub, BS): one block) and
// then the measured job, each in a fresh subdirectory prepared by
// prep(sub, measured), and returns the measured one with the first as its
// baseline. The
// baseline's CPU is fio's start-up (~150 ms on the test VM, more than
// the I/O of 1 GiB costs), which is subtracted.
func (r runner) runFioPair(ctx context.Context, dir string, prep func(sub string, measured bool) error, args func(sub, size string) []string) (m cmp.Measurement, raw json.RawMessage, err error) {
	var base cmp.Measurement
	for i, size := range []string{r.p.BS, r.p.Size} {
		sub, done, err := cmp.TempSub(r.dir, "seqvsfio-fio-")
		if err != nil {
			return m, nil, err
		}
		m, raw, err = func() (m cmp.Measurement, raw json.RawMessage, err error) {
			defer done(&err)
			if err := prep(sub, i == 1); err != nil {
				return m, nil, err
			}
			c, err := cmp.RunChild(ctx, nil, r.fio, args(sub, size)...)
			if err != nil {
				return m, nil, err
			}
			if m, err = parseFio(c.Stdout, dir); err != nil {
				return m, nil, err
			}
			m.Tool = cmp.ToolFio
			m.FromChild(c)
			return m, cmp.RawJSON(c.Stdout), nil
		}()
		if err != nil {
			if i == 0 {
				err = fmt.Errorf("prepare-only run: %w", err)
			}
			return m, nil, err
		}
		if i == 0 {
			base = m
		}
	}
	m.Base = &cmp.Baseline{Ops: base.Ops, Bytes: base.Bytes, CPU: base.CPU, Wall: base.Wall}
	return m, raw, nil
}

// runFioSnapshot is fio's snapshot job.
func (r runner) runFioSnapshot(ctx context.Context) (cmp.Measurement, json.RawMessage, error) {
	prep := func(sub string, measured bool) error {
		if !measured {
			return nil
		}
		return r.warmUp()
	}
	return r.runFioPair(ctx, "write", prep, r.fioSnapshotArgs)
}

// warmUp calls cmp.WarmPageCache with --size in the directory under test,
// unless --warm=false.
func (r runner) warmUp() error {
	if !r.warm {
		return nil
	}
	size, err := units.ParseSize(r.p.Size)
	if err != nil {
		return err
	}
	return cmp.WarmPageCache(r.dir, size)
}

// runFioRecovery lays out the file like etcdbench does (cmp.Layout), so
// that neither fio's CPU nor its time includes writing it, then reads it.
func (r runner) runFioRecovery(ctx context.Context) (cmp.Measurement, json.RawMessage, error) {
	size, err := units.ParseSize(r.p.Size)
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	prep := func(sub string, _ bool) error { return cmp.Layout(filepath.Join(sub, recoveryFile), size) }
	return r.runFioPair(ctx, "read", prep, func(sub, ioSize string) []string { return r.fioRecoveryArgs(sub, ioSize) })
}

// parseFio reads one job's bytes in direction dir ("read", "write") and
// its runtime. fio's job_runtime, and so its bw_bytes, runs from the
// job's first I/O until the end_fsync returned (checked with strace on
// fio 3.33: a 1.15 s write phase plus a 0.15 s fsync gave job_runtime
// 1305 ms), so bytes / job_runtime is a durable bandwidth, like
// etcdbench's durable_bandwidth. job_runtime is in whole milliseconds.
func parseFio(b []byte, dir string) (cmp.Measurement, error) {
	var rep fio.Output
	if err := cmp.DecodeFirst(b, &rep); err != nil {
		return cmp.Measurement{}, fmt.Errorf("reading fio's JSON report: %w", err)
	}
	if len(rep.Jobs) != 1 {
		return cmp.Measurement{}, fmt.Errorf("fio reported %d jobs, want 1", len(rep.Jobs))
	}
	j := rep.Jobs[0]
	if j.Error != 0 {
		return cmp.Measurement{}, fmt.Errorf("fio job %q reports error %d", j.Name, j.Error)
	}
	io := j.Write
	if dir == "read" {
		io = j.Read
	}
	if io.IOBytes <= 0 || j.RuntimeMs <= 0 {
		return cmp.Measurement{}, fmt.Errorf("fio job %q did no %s (bytes %d, runtime %d ms)", j.Name, dir, io.IOBytes, j.RuntimeMs)
	}
	rt := time.Duration(j.RuntimeMs) * time.Millisecond
	return cmp.Measurement{Ops: io.TotalIOs, Bytes: io.IOBytes, Runtime: rt,
		Figures: map[string]float64{"bandwidth": float64(io.IOBytes) / rt.Seconds(), "fio_bw_bytes": io.BW}}, nil
}

// runEtcdbench runs `etcdbench disk <workload>`, which creates and removes
// its own scratch directory in the directory under test, and reads the
// figure that is its bandwidth.
func (r runner) runEtcdbench(ctx context.Context, workload, figure string, extra ...string) (cmp.Measurement, json.RawMessage, error) {
	if workload == "snapshot" {
		if err := r.warmUp(); err != nil {
			return cmp.Measurement{}, nil, err
		}
	}
	args := append([]string{"disk", workload, "--dir", r.dir, "--size", r.p.Size, "--bs", r.p.BS}, extra...)
	args = append(args, "-o", "json", "--no-progress")
	// Exit 1 means a verdict failed: the report is complete and still counts.
	c, err := cmp.RunChild(ctx, []int{1}, r.etcdbench, args...)
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	m, err := parseEtcdbench(c.Stdout, workload, figure)
	if err != nil {
		return m, nil, fmt.Errorf("%w%s", err, cmp.Tail(c.Stderr))
	}
	m.Tool = cmp.ToolEtcdbench
	m.FromChild(c)
	return m, cmp.RawJSON(c.Stdout), nil
}

// parseEtcdbench reads a workload's ops, bytes, timed duration, the named
// bandwidth figure and the CPU it measured for its timed part.
func parseEtcdbench(b []byte, workload, figure string) (cmp.Measurement, error) {
	w, err := cmp.EtcdbenchWorkload(b, workload)
	if err != nil {
		return cmp.Measurement{}, err
	}
	bw, err := cmp.FigureOf(w, figure)
	if err != nil {
		return cmp.Measurement{}, err
	}
	if w.Bytes <= 0 || bw <= 0 {
		return cmp.Measurement{}, errors.New("etcdbench's " + workload + " workload moved no bytes")
	}
	return cmp.Measurement{Ops: w.Ops, Bytes: w.Bytes, Runtime: time.Duration(w.DurationNs), SelfCPU: cmp.SelfCPU(w),
		Figures: map[string]float64{"bandwidth": bw}}, nil
}
