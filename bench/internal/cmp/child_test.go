package cmp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestRunChild(t *testing.T) {
	ctx := context.Background()
	c, err := RunChild(ctx, nil, "/bin/sh", "-c", `i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo out; echo err >&2`)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Stdout) != "out\n" || string(c.Stderr) != "err\n" || c.CPU <= 0 || c.CPU != c.User+c.Sys || c.Wall <= 0 || c.ExitCode != 0 {
		t.Errorf("child = %+v, want its output, a busy loop's CPU time and a wall time", c)
	}
	if c, err := RunChild(ctx, []int{3}, "/bin/sh", "-c", "exit 3"); err != nil || c.ExitCode != 3 {
		t.Errorf("exit 3 allowed: exit code %d, err %v; want 3, nil", c.ExitCode, err)
	}
	_, err = RunChild(ctx, nil, "/bin/sh", "-c", "echo first >&2; echo why >&2; exit 4")
	if err == nil || !strings.Contains(err.Error(), "exit status 4") || !strings.Contains(err.Error(), "why") {
		t.Errorf("err = %v, want the exit status and the end of stderr", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := RunChild(cctx, nil, "/bin/sh", "-c", "sleep 5"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}

func TestTail(t *testing.T) {
	if got := Tail(nil); got != "" {
		t.Errorf("Tail(nil) = %q", got)
	}
	got := Tail([]byte("1\n2\n3\n4\n5\n6\n7\n"))
	if strings.Contains(got, "2") || !strings.Contains(got, "3\n  4\n  5\n  6\n  7") {
		t.Errorf("Tail kept %q, want the last five lines", got)
	}
}

func TestAttach(t *testing.T) {
	ctx := context.Background()
	// A tracer that stops on SIGINT: detached without error.
	detach, pid, err := Attach(ctx, 100*time.Millisecond, "sh", "-c", "echo attached; exec sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		t.Errorf("pid %d of the tracer: %v", pid, err)
	}
	out, err := detach()
	if err != nil || string(out) != "attached\n" {
		t.Errorf("detach: %q, %v; want its output and no error", out, err)
	}
	// One that ends before the load: an error naming it.
	if _, _, err := Attach(ctx, 2*time.Second, "sh", "-c", "echo no such pid >&2; exit 3"); err == nil || !strings.Contains(err.Error(), "no such pid") {
		t.Errorf("early exit: %v, want an error with its stderr", err)
	}
}
