package main

// Helpers for the tests that build and run the real etcdbench binary.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/testutil"
)

// internalPrefix matches the name of an internal package (a directory
// under internal/) used as an error's prefix: at the start, after another
// prefix or in parentheses ("etcdbench: disk: ", "(etcdload: "), not as a
// word of a sentence ("nothing to diagnose: ...").
// The names that are words a message says in the user's terms ("not an
// etcdbench result: ...") are left out.
var internalPrefix = sync.OnceValue(func() *regexp.Regexp {
	words := []string{"internal", "testdata", "result", "run", "finding", "session", "units"}
	var names []string
	_ = filepath.WalkDir(filepath.Join("..", "..", "internal"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && !strings.HasPrefix(d.Name(), "Fuzz") && !slices.Contains(words, d.Name()) {
			names = append(names, regexp.QuoteMeta(d.Name()))
		}
		return nil
	})
	return regexp.MustCompile(`(^|: |\()(` + strings.Join(names, "|") + `): `)
})

// binPath is the etcdbench binary that TestMain builds.
var binPath string

// processTimeout bounds every child process, so a hung run fails the test
// instead of the whole package timing out.
const processTimeout = 90 * time.Second

// Names of etcdbench's scratch directories and their marker, as documented.
const (
	scratchPrefix = ".etcdbench-scratch-"
	markerName    = ".etcdbench-scratch"
)

func TestMain(m *testing.M) {
	// A member of a 3-member embedded etcd is this test binary again.
	if code, ok := etcdcluster.MaybeRunMember(); ok {
		os.Exit(code)
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "etcdbench-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating a directory for the test binary:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// An unprivileged user must be able to run the binary.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binPath = filepath.Join(dir, "etcdbench")
	out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	if err := os.Chmod(binPath, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// runOpts say how to start the binary.
type runOpts struct {
	dir  string              // working directory; empty: the test's
	env  []string            // added to the test's environment
	cred *syscall.Credential // run as another user; nil: as the test
	// stdout, if set, is the process's standard output instead of a buffer.
	stdout *os.File
	// timeout bounds the process (0: processTimeout), for a run whose
	// steps are long by design.
	timeout time.Duration
}

// runResult is what a finished run left.
type runResult struct {
	stdout, stderr string
	code           int // exit code; -1 if killed by a signal
}

// process is a running etcdbench.
type process struct {
	cmd            *exec.Cmd
	cancel         context.CancelFunc
	stdout, stderr bytes.Buffer
	done           chan struct{}
	res            runResult
}

// start starts the binary with args; t's cleanup kills it if the test
// did not wait for it.
func start(t *testing.T, o runOpts, args ...string) *process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(o.timeout, processTimeout))
	p := &process{cancel: cancel, done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, binPath, args...)
	p.cmd.Dir = o.dir
	p.cmd.Env = append(os.Environ(), o.env...)
	p.cmd.Stdout = &p.stdout
	if o.stdout != nil {
		p.cmd.Stdout = o.stdout
	}
	p.cmd.Stderr = &p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	if o.cred != nil {
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: o.cred}
	}
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting etcdbench %v: %v", args, err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			p.res.stderr = "wait: " + err.Error()
		}
		p.res.code = -1
		if p.cmd.ProcessState != nil {
			p.res.code = p.cmd.ProcessState.ExitCode()
		}
		p.res.stdout = p.stdout.String()
		p.res.stderr += p.stderr.String()
		close(p.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to end and returns what it left.
func (p *process) wait(t *testing.T) runResult {
	t.Helper()
	<-p.done
	p.cancel()
	return p.res
}

// signal sends sig to the process.
func (p *process) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("sending %v: %v", sig, err)
	}
}

// runBin runs the binary with args to completion.
func runBin(t *testing.T, o runOpts, args ...string) runResult {
	t.Helper()
	return start(t, o, args...).wait(t)
}

// checkOneErrorLine fails unless stderr is exactly one line starting with
// "etcdbench: ", the only prefix of the line, in the user's terms (no
// internal package's name as a prefix), and shows no sign of a crash.
func checkOneErrorLine(t *testing.T, stderr string) {
	t.Helper()
	line, ok := strings.CutSuffix(stderr, "\n")
	switch {
	case !ok || strings.Contains(line, "\n"):
		t.Errorf("stderr is not exactly one line:\n%s", stderr)
	case !strings.HasPrefix(line, "etcdbench: "):
		t.Errorf("stderr does not start with \"etcdbench: \": %q", line)
	case strings.Count(line, "etcdbench: ") != 1:
		t.Errorf("stderr says \"etcdbench: \" more than once: %q", line)
	}
	if m := internalPrefix().FindString(line); m != "" {
		t.Errorf("stderr names an internal package (%q): %q", strings.TrimSpace(m), line)
	}
	for _, crash := range []string{"panic", "goroutine ", "runtime error"} {
		if strings.Contains(stderr, crash) {
			t.Errorf("stderr shows a crash (%q):\n%s", crash, stderr)
		}
	}
}

// scratchDirs returns the paths of the entries of dir named like a scratch
// directory.
func scratchDirs(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, scratchPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkNoScratch fails if dir holds a scratch directory.
func checkNoScratch(t *testing.T, dir string) {
	t.Helper()
	if left := scratchDirs(t, dir); len(left) > 0 {
		t.Errorf("scratch directories left in %s: %v", dir, left)
	}
}

// waitScratch waits until p has created its scratch directory in dir, with
// its marker written, and returns its path.
func waitScratch(t *testing.T, p *process, dir string) string {
	t.Helper()
	var path string
	testutil.WaitFor(t, 10*time.Second, "the scratch directory and its marker", func() bool {
		if p.exited() {
			t.Fatalf("etcdbench exited before creating its scratch directory: %+v", p.res)
		}
		dirs := scratchDirs(t, dir)
		if len(dirs) != 1 {
			return false
		}
		b, err := os.ReadFile(filepath.Join(dirs[0], markerName))
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			return false
		}
		path = dirs[0]
		return true
	})
	return path
}

// snapshot describes every entry under dir (mode, size and content hash),
// so that a test can assert nothing in it changed.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	s := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		}
		s[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot of %s: %v", dir, err)
	}
	return s
}

// checkSnapshot fails if dir differs from the snapshot before.
func checkSnapshot(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := snapshot(t, dir)
	for name, desc := range before {
		switch got, ok := after[name]; {
		case !ok:
			t.Errorf("%s was removed from %s", name, dir)
		case got != desc:
			t.Errorf("%s in %s changed: %s, was %s", name, dir, got, desc)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("new entry %s left in %s", name, dir)
		}
	}
}
