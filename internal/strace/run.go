package strace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNotInstalled is returned when strace is not installed.
var ErrNotInstalled = errors.New("strace is not installed (e.g. apt-get install strace); without it, read the WAL offline: etcdbench diagnose wal --data-dir DIR")

// Syscalls are the calls traced: etcd appends to its WAL with write()
// and syncs with fdatasync(); bbolt writes the db with pwrite64 and
// fdatasync; writev and fsync complete the set for other versions.
const Syscalls = "write,pwrite64,writev,fdatasync,fsync"

// Tool is an installed strace.
type Tool struct {
	Path    string
	Version string // e.g. "6.1"
	// TraceFDs: the version filters by descriptor (--trace-fds, strace 6.3
	// and later); the filter only trims the output, it does not make
	// tracing any cheaper.
	TraceFDs bool
}

// Find looks strace up in PATH and asks for its version and options.
func Find(ctx context.Context) (Tool, error) {
	p, err := exec.LookPath("strace")
	if err != nil {
		return Tool{}, ErrNotInstalled
	}
	t := Tool{Path: p}
	out, err := exec.CommandContext(ctx, p, "-V").Output()
	if err != nil {
		return t, fmt.Errorf("%s -V: %v", p, err)
	}
	t.Version = parseVersion(string(out))
	help, _ := exec.CommandContext(ctx, p, "-h").CombinedOutput()
	t.TraceFDs = strings.Contains(string(help), "trace-fds")
	return t, nil
}

// parseVersion reads "strace -- version 6.1" (or "strace version 4.26").
func parseVersion(out string) string {
	first, _, _ := strings.Cut(out, "\n")
	if i := strings.LastIndex(first, "version "); i >= 0 {
		return strings.TrimSpace(first[i+len("version "):])
	}
	return ""
}

// Args is the command line that traces pid into out. fds, when the
// version can filter by descriptor, limits the output to them.
func (t Tool) Args(pid int, out string, fds []int) []string {
	args := []string{"-f", "-T", "-tt", "-y", "-s", "0", "-qq", "-o", out, "-p", strconv.Itoa(pid), "-e", "trace=" + Syscalls}
	if t.TraceFDs && len(fds) > 0 {
		sort.Ints(fds)
		s := make([]string, len(fds))
		for i, fd := range fds {
			s[i] = strconv.Itoa(fd)
		}
		args = append(args, "--trace-fds="+strings.Join(s, ","))
	}
	return args
}

// Run attaches strace to pid for d, writing its output into a file
// in tmpDir, and returns the file's path. strace is stopped with SIGINT,
// which makes it detach and leave etcd running as before.
func (t Tool) Run(ctx context.Context, pid int, d time.Duration, tmpDir string, fds []int) (string, error) {
	out := filepath.Join(tmpDir, "strace.out")
	tctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(tctx, t.Path, t.Args(pid, out, fds)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 10 * time.Second
	// If etcdbench dies without stopping strace (SIGKILL), strace must not
	// go on slowing etcd down: the kernel sends it SIGINT, and it detaches.
	// The signal follows the thread that started the child, so that thread
	// stays this goroutine's until strace has ended.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	err := cmd.Run()
	msg := strings.TrimSpace(stderr.String())
	if first, _, _ := strings.Cut(msg, "\n"); first != "" {
		msg = first
	}
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	// strace that ran its course and was interrupted by us succeeded,
	// whatever its exit status; one that stopped early did not attach.
	if err != nil && time.Since(start) < d || strings.Contains(msg, "attach:") {
		if msg == "" {
			msg = err.Error()
		}
		return out, fmt.Errorf("strace could not trace process %d: %s (tracing needs root, or the same user and kernel.yama.ptrace_scope 0)", pid, msg)
	}
	if _, serr := os.Stat(out); serr != nil {
		return out, fmt.Errorf("strace left no output: %v (%s)", serr, msg)
	}
	return out, nil
}
