package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
)

// rawRun is one run in the --json file: the figures and the tool's report.
type rawRun struct {
	measurement
	Report json.RawMessage `json:"report,omitempty"`
}

// jsonFile is the layout of the --json file.
type jsonFile struct {
	Started   time.Time `json:"started_at"`
	Dir       string    `json:"dir"`
	BS        string    `json:"bs"`
	Size      string    `json:"size"`
	Fio       string    `json:"fio_version"`
	Etcdbench string    `json:"etcdbench"`
	Runs      []rawRun  `json:"runs"`
	Summary   *summary  `json:"summary,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// run does the whole comparison.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	env, err := cmp.Setup(ctx, o.Common, "wal-vs-fio", stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	r := runner{fio: env.Fio, etcdbench: env.Etcdbench, dir: env.Dir, bs: o.BS, size: o.Size}

	load0, err := cmp.LoadAverage()
	if err != nil {
		return err
	}
	out := jsonFile{Started: time.Now().UTC(), Dir: r.dir, BS: o.BS, Size: o.Size,
		Fio: env.FioVersion, Etcdbench: r.etcdbench}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)
	fmt.Fprintf(stdout, "wal-vs-fio: %s vs etcdbench disk wal, --bs %s --size %s, %d rounds, on %s\n\n",
		cmp.OrUnknown(out.Fio), o.BS, o.Size, o.Rounds, r.dir)

	var rounds []round
	for n := 1; n <= o.Rounds; n++ {
		rd, runs, err := doRound(ctx, r, n, o.Rounds, o.Adaptive, o.Control, stderr)
		out.Runs = append(out.Runs, runs...)
		if err != nil {
			return fmt.Errorf("round %d: %w", n, err)
		}
		rounds = append(rounds, rd)
		if err := renderRound(stdout, rd, o.Rounds); err != nil {
			return err
		}
	}
	s := summarize(rounds)
	out.Summary = &s
	var table bytes.Buffer
	if err := renderSummary(io.MultiWriter(stdout, &table), s); err != nil {
		return err
	}
	res := cmp.Result{Bench: "wal-vs-fio", Source: "measured: " + strings.Join(append([]string{"bench/wal-vs-fio/run"}, o.Args...), " "),
		Machine: cmp.Machine(r.dir) + ", " + cmp.OrUnknown(out.Fio), Rounds: len(rounds), Figures: cmp.RowFigures(s.Rows), Table: table.String()}
	return cmp.SaveResult(o.Abs(o.Results), res, load0, out.Started)
}

// doRound runs fio and etcdbench's fixed-size mode, fio first in odd
// rounds (cmp.Alternate), so that whatever state the first run leaves (a
// warm journal, device cache, CPU frequency) favours neither tool overall;
// then the adaptive mode. With the control, fio runs between etcdbench and
// the control fio (etcdbench first in odd rounds, the control in even
// ones), so that both runs compared with fio are its neighbours, each
// before it in half of the rounds and after it in the other half.
func doRound(ctx context.Context, r runner, n, total int, adaptive, control bool, stderr io.Writer) (round, []rawRun, error) {
	rd := round{N: n}
	var runs []rawRun
	type step struct {
		name string
		fn   func() (measurement, json.RawMessage, error)
		dst  *measurement
	}
	fioStep := step{toolFio, func() (measurement, json.RawMessage, error) { return r.runFio(ctx, toolFio) }, &rd.Fio}
	etcdStep := step{toolEtcd, func() (measurement, json.RawMessage, error) { return r.runEtcdbench(ctx, false) }, &rd.Etcd}
	steps := cmp.Alternate(n, []step{fioStep, etcdStep})
	if control {
		rd.Control = new(measurement)
		controlStep := step{toolControl, func() (measurement, json.RawMessage, error) { return r.runFio(ctx, toolControl) }, rd.Control}
		steps = cmp.Alternate(n, []step{etcdStep, fioStep, controlStep})
	}
	if adaptive {
		rd.Adaptive = new(measurement)
		steps = append(steps, step{toolAdaptive, func() (measurement, json.RawMessage, error) { return r.runEtcdbench(ctx, true) }, rd.Adaptive})
	}
	for i, s := range steps {
		fmt.Fprintf(stderr, "round %d/%d: %s ...\n", n, total, s.name)
		m, raw, err := s.fn()
		if err != nil {
			return rd, runs, err
		}
		m.Round, m.Position = n, i+1
		*s.dst = m
		rd.Order = append(rd.Order, s.name)
		runs = append(runs, rawRun{measurement: m, Report: raw})
	}
	return rd, runs, nil
}
