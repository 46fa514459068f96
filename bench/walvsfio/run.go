package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// runner runs the two tools on one directory with one recipe.
type runner struct {
	fio       string // fio executable
	etcdbench string // etcdbench executable
	dir       string // directory under test
	bs, size  string // passed to both tools as given
}

// child is what one finished child process left.
type child struct {
	stdout, stderr []byte
	wall, cpu      time.Duration
	user, sys      time.Duration // cpu = user + sys
}

// runChild runs name with args, returning its output, its wall time (fork to
// exit) and its CPU time (user+sys from its rusage, which on Linux includes
// the descendants it waited for, such as fio's job processes). Exit codes
// other than those in okExit are errors. A cancelled ctx interrupts the
// child with SIGINT, so that it removes its files, and kills it 30 s later.
func runChild(ctx context.Context, okExit []int, name string, args ...string) (child, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 30 * time.Second
	start := time.Now()
	err := cmd.Run()
	c := child{stdout: out.Bytes(), stderr: errb.Bytes(), wall: time.Since(start)}
	if cmd.ProcessState != nil {
		c.user, c.sys = cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime()
		c.cpu = c.user + c.sys
	}
	if ctx.Err() != nil {
		return c, ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		for _, ok := range okExit {
			if ee.ExitCode() == ok {
				return c, nil
			}
		}
	}
	if err != nil {
		return c, fmt.Errorf("%s %s: %w%s", filepath.Base(name), strings.Join(args, " "), err, tail(c.stderr))
	}
	return c, nil
}

// tail formats the last lines of a child's stderr for an error message.
func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "; its stderr ends with:\n  " + strings.Join(lines, "\n  ")
}

// rawJSON returns the first JSON value in b, for the --json file.
func rawJSON(b []byte) json.RawMessage {
	b, err := firstJSON(b)
	if err != nil {
		return nil
	}
	var raw json.RawMessage
	if json.NewDecoder(bytes.NewReader(b)).Decode(&raw) != nil {
		return nil
	}
	return raw
}

// runFio runs fio's recipe in a fresh subdirectory of the directory under
// test and removes it (and fio's file, which fio leaves behind) afterwards.
func (r runner) runFio(ctx context.Context) (m measurement, raw json.RawMessage, err error) {
	sub, err := os.MkdirTemp(r.dir, "walvsfio-fio-")
	if err != nil {
		return m, nil, fmt.Errorf("creating fio's directory in %s: %w", r.dir, err)
	}
	defer func() {
		if rerr := os.RemoveAll(sub); rerr != nil && err == nil {
			err = fmt.Errorf("removing fio's files: %w", rerr)
		}
	}()
	c, err := runChild(ctx, nil, r.fio,
		"--name=walvsfio", "--directory="+sub,
		"--rw=write", "--ioengine=sync", "--fdatasync=1",
		"--bs="+r.bs, "--size="+r.size, "--output-format=json")
	if err != nil {
		return m, nil, err
	}
	res, err := parseFio(c.stdout)
	if err != nil {
		return m, nil, err
	}
	t := res.Total()
	m = measurement{Tool: toolFio, Syncs: t.Syncs, P50: t.P50, P99: t.P99, Wall: c.wall, CPU: c.cpu, User: c.user, Sys: c.sys}
	var rt struct {
		Jobs []struct {
			Runtime int64 `json:"job_runtime"` // ms
		} `json:"jobs"`
	}
	if decodeFirst(c.stdout, &rt) == nil && len(rt.Jobs) > 0 {
		m.Runtime = time.Duration(rt.Jobs[0].Runtime) * time.Millisecond
	}
	return m, rawJSON(c.stdout), nil
}

// runEtcdbench runs `etcdbench disk wal` on the directory under test:
// fio's recipe when adaptive is false, its adaptive stop otherwise.
// etcdbench creates and removes its own scratch directory there.
func (r runner) runEtcdbench(ctx context.Context, adaptive bool) (measurement, json.RawMessage, error) {
	args := []string{"disk", "wal", "--dir", r.dir, "--bs", r.bs, "-o", "json", "--no-progress"}
	tool := toolAdaptive
	if !adaptive {
		args = append(args, "--size", r.size)
		tool = toolEtcd
	}
	// Exit 1 means a verdict failed: the report is complete and still counts.
	c, err := runChild(ctx, []int{1}, r.etcdbench, args...)
	if err != nil {
		return measurement{}, nil, err
	}
	res, err := parseEtcdbench(c.stdout)
	if err != nil {
		return measurement{}, nil, fmt.Errorf("%w%s", err, tail(c.stderr))
	}
	m := measurement{Tool: tool, Syncs: res.Syncs, P50: res.P50, P99: res.P99,
		Wall: c.wall, Runtime: res.Duration, CPU: c.cpu, User: c.user, Sys: c.sys, Stop: res.StopReason}
	return m, rawJSON(c.stdout), nil
}

// buildEtcdbench compiles ./cmd/etcdbench of the module in moduleDir into
// binDir.
func buildEtcdbench(ctx context.Context, moduleDir, binDir string) (string, error) {
	out := filepath.Join(binDir, "etcdbench")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/etcdbench")
	cmd.Dir = moduleDir
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building etcdbench in %s (pass --etcdbench PATH to use a built one): %w%s", moduleDir, err, tail(b))
	}
	return out, nil
}

// fioVersion returns `fio --version`, or "" when it cannot tell.
func fioVersion(ctx context.Context, fio string) string {
	b, err := exec.CommandContext(ctx, fio, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
