package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// errFioMissing is returned when the fio binary cannot be found.
var errFioMissing = errors.New("fio not found")

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

// abs resolves p against base unless it is absolute.
func abs(base, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}

// run does the whole comparison.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	fio, err := exec.LookPath(o.Fio)
	if err != nil {
		return usageError{fmt.Errorf("%w (%v): install it (e.g. apt-get install fio) or pass --fio PATH", errFioMissing, err)}
	}
	r := runner{fio: fio, bs: o.BS, size: o.Size}

	if o.Dir == "" {
		if r.dir, err = os.MkdirTemp(o.Base, "wal-vs-fio-"); err != nil {
			return fmt.Errorf("creating a test directory in %s (or pass --dir): %w", o.Base, err)
		}
		defer removeAll(r.dir, &err)
	} else {
		r.dir = abs(o.Base, o.Dir)
		st, serr := os.Stat(r.dir)
		if serr != nil || !st.IsDir() {
			return usageError{fmt.Errorf("--dir %s is not an existing directory", r.dir)}
		}
	}

	if o.Etcdbench != "" {
		r.etcdbench = abs(o.Base, o.Etcdbench)
	} else {
		bin, berr := os.MkdirTemp("", "walvsfio-bin-")
		if berr != nil {
			return berr
		}
		defer removeAll(bin, &err)
		fmt.Fprintln(stderr, "building ./cmd/etcdbench ...")
		if r.etcdbench, err = buildEtcdbench(ctx, o.ModuleDir, bin); err != nil {
			return err
		}
	}

	out := jsonFile{Started: time.Now().UTC(), Dir: r.dir, BS: o.BS, Size: o.Size,
		Fio: fioVersion(ctx, fio), Etcdbench: r.etcdbench}
	if o.JSON != "" {
		defer func() {
			if err != nil {
				out.Error = err.Error()
			}
			if werr := writeJSON(abs(o.Base, o.JSON), out); werr != nil && err == nil {
				err = werr
			}
		}()
	}
	fmt.Fprintf(stdout, "wal-vs-fio: %s vs etcdbench disk wal, --bs %s --size %s, %d rounds, on %s\n\n",
		orUnknown(out.Fio), o.BS, o.Size, o.Rounds, r.dir)

	var rounds []round
	for n := 1; n <= o.Rounds; n++ {
		rd, runs, err := doRound(ctx, r, n, o.Rounds, o.Adaptive, stderr)
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
	return renderSummary(stdout, s)
}

// doRound runs fio and etcdbench's fixed-size mode, fio first in odd
// rounds, so that whatever state the first run leaves (a warm journal,
// device cache, CPU frequency) favours neither tool overall; then the
// adaptive mode.
func doRound(ctx context.Context, r runner, n, total int, adaptive bool, stderr io.Writer) (round, []rawRun, error) {
	rd := round{N: n, FioFirst: n%2 == 1}
	var runs []rawRun
	type step struct {
		name string
		fn   func() (measurement, json.RawMessage, error)
		dst  *measurement
	}
	fioStep := step{toolFio, func() (measurement, json.RawMessage, error) { return r.runFio(ctx) }, &rd.Fio}
	etcdStep := step{toolEtcd, func() (measurement, json.RawMessage, error) { return r.runEtcdbench(ctx, false) }, &rd.Etcd}
	steps := []step{fioStep, etcdStep}
	if !rd.FioFirst {
		steps = []step{etcdStep, fioStep}
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
		runs = append(runs, rawRun{measurement: m, Report: raw})
	}
	return rd, runs, nil
}

// removeAll removes dir, reporting a failure through *err unless it
// already holds one.
func removeAll(dir string, err *error) {
	if rerr := os.RemoveAll(dir); rerr != nil && *err == nil {
		*err = fmt.Errorf("removing %s: %w", dir, rerr)
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the --json file: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing --json %s: %w", path, err)
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "fio (version unknown)"
	}
	return s
}
