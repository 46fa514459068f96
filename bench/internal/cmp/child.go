package cmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Child is what one finished child process left.
type Child struct {
	Stdout, Stderr []byte
	Wall           time.Duration // fork to exit, as the parent saw it
	CPU            time.Duration // User + Sys
	User, Sys      time.Duration
	// ExitCode is the child's exit status, -1 when it did not exit
	// normally (killed by a signal, never started).
	ExitCode int
}

// RunChild runs name with args, returning its output, its wall time (fork
// to exit) and its CPU time (user+sys from its rusage, which on Linux
// includes the descendants it waited for, such as fio's job processes).
// Exit codes other than those in okExit are errors. A cancelled ctx
// interrupts the child with SIGINT, so that it removes its files, kills it
// 30 s later, and returns ctx's error.
func RunChild(ctx context.Context, okExit []int, name string, args ...string) (Child, error) {
	return RunChildIn(ctx, okExit, nil, name, args...)
}

// RunChildIn is RunChild with the command passed through wrap (nil: none)
// before it starts, e.g. a storage's wrapper that puts it in a cgroup.
func RunChildIn(ctx context.Context, okExit []int, wrap func(*exec.Cmd), name string, args ...string) (Child, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	if wrap != nil {
		wrap(cmd)
	}
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 30 * time.Second
	start := time.Now()
	err := cmd.Run()
	c := Child{Stdout: out.Bytes(), Stderr: errb.Bytes(), Wall: time.Since(start), ExitCode: -1}
	if cmd.ProcessState != nil {
		c.ExitCode = cmd.ProcessState.ExitCode()
		c.User, c.Sys = cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime()
		c.CPU = c.User + c.Sys
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
		return c, fmt.Errorf("%s %s: %w%s", filepath.Base(name), strings.Join(args, " "), err, Tail(c.Stderr))
	}
	return c, nil
}

// Tail formats the last lines of a child's stderr for an error message,
// "" when there are none.
func Tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "; its stderr ends with:\n  " + strings.Join(lines, "\n  ")
}

// BuildEtcdbench compiles ./cmd/etcdbench of the module in moduleDir into
// binDir and returns the binary's path.
func BuildEtcdbench(ctx context.Context, moduleDir, binDir string) (string, error) {
	out := filepath.Join(binDir, "etcdbench")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/etcdbench")
	cmd.Dir = moduleDir
	if b, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("building etcdbench in %s (pass --etcdbench PATH to use a built one): %w%s", moduleDir, err, Tail(b))
	}
	return out, nil
}

// FioVersion returns `fio --version`, or "" when it cannot tell.
func FioVersion(ctx context.Context, fio string) string {
	b, err := exec.CommandContext(ctx, fio, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// OrUnknown returns a fio version for a heading.
func OrUnknown(version string) string {
	if version == "" {
		return "fio (version unknown)"
	}
	return version
}

// Attach starts bin (a tracer: etcdbench trace, strace) in the background
// and gives it settle to attach before it returns its pid; detach
// interrupts it with SIGINT and returns what it printed. Exiting as asked
// is no error: etcdbench's 130 (or 1, a FAIL verdict in its report), or
// strace's re-raised SIGINT after it detached.
func Attach(ctx context.Context, settle time.Duration, bin string, args ...string) (detach func() ([]byte, error), pid int, err error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return nil, 0, fmt.Errorf("%s exited before the load: %v%s", bin, err, Tail(errb.Bytes()))
	case <-time.After(settle):
	}
	return func() ([]byte, error) {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				ws, _ := ee.Sys().(syscall.WaitStatus)
				// Interrupted as asked: etcdbench exits 130 (or 1 for a
				// FAIL verdict), strace detaches and re-raises SIGINT.
				if ee.ExitCode() == 130 || ee.ExitCode() == 1 || (ws.Signaled() && ws.Signal() == syscall.SIGINT) {
					err = nil
				}
			}
			if err != nil {
				return out.Bytes(), fmt.Errorf("%s: %w%s", bin, err, Tail(errb.Bytes()))
			}
			return out.Bytes(), nil
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			return out.Bytes(), fmt.Errorf("%s did not stop within 30 s of SIGINT", bin)
		}
	}, cmd.Process.Pid, nil
}
