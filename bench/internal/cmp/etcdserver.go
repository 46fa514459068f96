package cmp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// EtcdServer is the etcd a comparison loads: bench/put-vs-etcd-benchmark/etcdserver,
// an embedded etcd in a process of its own, with its data in a new
// directory that it removes when it stops.
type EtcdServer struct {
	// URL is its client URL, http://127.0.0.1:PORT.
	URL   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	errb  *strings.Builder
	done  chan error
}

// BuildEtcdServer builds the etcd server helper into binDir, as a
// program named etcd: what finds etcd processes by name (etcdbench
// trace without --pid, the exporter) finds it as it finds a real etcd.
func BuildEtcdServer(ctx context.Context, moduleDir, binDir string) (string, error) {
	out := filepath.Join(binDir, "etcd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./bench/put-vs-etcd-benchmark/etcdserver")
	cmd.Dir = moduleDir
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the etcd server helper: %w%s", err, Tail(b))
	}
	return out, nil
}

// ServeEtcd builds the helper into a temporary directory and starts it
// with its data in dir. Deferred as defer stop(&err), stop stops it,
// removes the helper and, when that fails and *errp is nil, makes the
// failure *errp (as the run's Env.Release does).
func ServeEtcd(ctx context.Context, moduleDir, dir string, stderr io.Writer) (s *EtcdServer, stop func(errp *error), err error) {
	bin, err := os.MkdirTemp("", "etcdserver-bin-")
	if err != nil {
		return nil, nil, err
	}
	helper, err := BuildEtcdServer(ctx, moduleDir, bin)
	if err == nil {
		fmt.Fprintln(stderr, "starting etcd ...")
		s, err = StartEtcdServer(ctx, helper, dir)
	}
	if err != nil {
		return nil, nil, errors.Join(err, os.RemoveAll(bin))
	}
	return s, func(errp *error) {
		if serr := errors.Join(s.Stop(), os.RemoveAll(bin)); serr != nil && *errp == nil {
			*errp = serr
		}
	}, nil
}

// StartEtcdServer starts the helper with its data in dir and waits for
// its client URL.
func StartEtcdServer(ctx context.Context, helper, dir string) (*EtcdServer, error) {
	return StartEtcdServerIn(ctx, nil, helper, dir)
}

// StartEtcdServerIn is StartEtcdServer with the helper's command passed
// through wrap (nil: none) before it starts, e.g. into a cgroup.
func StartEtcdServerIn(ctx context.Context, wrap func(*exec.Cmd), helper, dir string) (*EtcdServer, error) {
	cmd := exec.Command(helper, "--dir", dir)
	if wrap != nil {
		wrap(cmd)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &EtcdServer{cmd: cmd, stdin: stdin, errb: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stderr = s.errb // read only after Wait
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the etcd server helper: %w", err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			urls <- strings.TrimSpace(sc.Text())
		}
		close(urls)
		_, _ = io.Copy(io.Discard, stdout)
		s.done <- cmd.Wait()
	}()
	select {
	case u, ok := <-urls:
		if ok && strings.HasPrefix(u, "http://127.0.0.1:") {
			s.URL = u
			return s, nil
		}
		err = fmt.Errorf("the etcd server helper printed no client URL (%q)", u)
	case <-time.After(60 * time.Second):
		err = errors.New("the etcd server helper did not print its URL within 60 s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	return nil, errors.Join(err, s.Stop())
}

// PID is the process id of the etcd (the helper runs it in-process).
func (s *EtcdServer) PID() int { return s.cmd.Process.Pid }

// Stop closes the helper's stdin, which makes it stop etcd and remove its
// data, and waits; SIGINT after 30 s, SIGKILL after 10 s more.
func (s *EtcdServer) Stop() error {
	s.stdin.Close()
	for _, step := range []struct {
		wait time.Duration
		sig  os.Signal
	}{{30 * time.Second, os.Interrupt}, {10 * time.Second, os.Kill}} {
		select {
		case err := <-s.done:
			if err != nil {
				return fmt.Errorf("etcd server helper: %w%s", err, Tail([]byte(s.errb.String())))
			}
			return nil
		case <-time.After(step.wait):
			_ = s.cmd.Process.Signal(step.sig)
		}
	}
	return errors.Join(errors.New("etcd server helper did not exit"), <-s.done)
}
