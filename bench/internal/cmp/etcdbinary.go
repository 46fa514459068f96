package cmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"etcdbench/internal/etcdload/metrics"
)

// lockedBuffer is a bytes.Buffer for a child's output, read after it
// exits or while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 { // keep the start and stop writing: a tail is in the error
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}

// EtcdBinary is an etcd binary (Debian's etcd 3.4) run as one member, a
// child process with its data in a directory of its own.
type EtcdBinary struct {
	// URL is its client URL, http://127.0.0.1:PORT; DataDir its data dir;
	// PeerURL the URL its peer listener listens on (in a cluster).
	URL, DataDir, PeerURL string
	path                  string
	args                  []string
	wrap                  func(*exec.Cmd)
	cmd                   *exec.Cmd
	out                   *lockedBuffer
	done                  chan error
	// down says the process was killed (Kill) and not started again.
	down bool
}

// StartEtcdBinary runs the etcd at path as one member with its data in a
// new directory under dir, through wrap (a zoo place's cgroup; nil:
// none), and waits until it is healthy.
func StartEtcdBinary(ctx context.Context, wrap func(*exec.Cmd), dir, path string) (*EtcdBinary, error) {
	caddr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	paddr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	curl, purl := "http://"+caddr, "http://"+paddr
	e, err := startEtcd(wrap, dir, path, curl, "--name", "zoo",
		"--listen-client-urls", curl, "--advertise-client-urls", curl,
		"--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
		"--initial-cluster", "zoo="+purl)
	if err != nil {
		return nil, err
	}
	if err := e.waitHealthy(ctx); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

// startEtcd starts the etcd at path with its data in a new directory
// under dir and args beside it (logging warnings only), through wrap
// (nil: none); url is its client URL.
func startEtcd(wrap func(*exec.Cmd), dir, path, url string, args ...string) (*EtcdBinary, error) {
	data, err := os.MkdirTemp(dir, "etcd-")
	if err != nil {
		return nil, err
	}
	e := &EtcdBinary{URL: url, DataDir: data, path: path, wrap: wrap, out: &lockedBuffer{},
		args: append([]string{"--data-dir", data, "--logger", "zap", "--log-level", "warn"}, args...)}
	if err := e.launch(); err != nil {
		return nil, errors.Join(err, os.RemoveAll(data))
	}
	return e, nil
}

// launch starts e's process with its command line.
func (e *EtcdBinary) launch() error {
	cmd := exec.Command(e.path, e.args...)
	cmd.Stdout, cmd.Stderr = e.out, e.out
	if e.wrap != nil {
		e.wrap(cmd)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", e.path, err)
	}
	done := make(chan error, 1)
	e.cmd, e.done, e.down = cmd, done, false
	go func() { done <- cmd.Wait() }()
	return nil
}

// PID is the process id of e's running process.
func (e *EtcdBinary) PID() int { return e.cmd.Process.Pid }

// Signal sends sig to e's process (SIGSTOP and SIGCONT freeze and thaw
// it).
func (e *EtcdBinary) Signal(sig syscall.Signal) error { return e.cmd.Process.Signal(sig) }

// Kill kills e's process with SIGKILL (a crash: no leadership handed
// over, nothing flushed) and waits until it is reaped; its data stays
// for Restart.
func (e *EtcdBinary) Kill(ctx context.Context) error {
	if e.down {
		return nil
	}
	if err := e.cmd.Process.Kill(); err != nil {
		return err
	}
	select {
	case <-e.done:
		e.down = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Restart starts e again after Kill: a new process with the same command
// line (name, ports, cluster) on its data. It does not wait for it to
// serve: the caller times that (Healthy, or its own probe).
func (e *EtcdBinary) Restart() error {
	if !e.down {
		return errors.New("etcd still runs: kill it before a restart")
	}
	return e.launch()
}

// Exited says whether e's process has exited (killed or failed).
func (e *EtcdBinary) Exited() bool {
	if e.down {
		return true
	}
	select {
	case err := <-e.done:
		e.done <- err
		return true
	default:
		return false
	}
}

// Log is the tail of what e's processes printed (warnings and errors).
func (e *EtcdBinary) Log() string { return Tail(e.out.Bytes()) }

// waitHealthy waits until e's /health says true (a leader elected and
// the member serving), or e exits, for at most a minute.
func (e *EtcdBinary) waitHealthy(ctx context.Context) error {
	healthy := func(status int, body []byte) bool {
		return status == http.StatusOK && bytes.Contains(body, []byte(`"true"`))
	}
	if err := WaitHTTP(ctx, e.URL+"/health", healthy, e.done); err != nil {
		return fmt.Errorf("%s: %w%s", e.cmd.Path, err, Tail(e.out.Bytes()))
	}
	return nil
}

// Stop stops etcd with SIGTERM (SIGKILL after 30 s), continuing it first
// should it be stopped (SIGSTOP), and removes its data.
func (e *EtcdBinary) Stop() error {
	var err error
	if !e.down {
		_ = e.cmd.Process.Signal(syscall.SIGTERM)
		_ = e.cmd.Process.Signal(syscall.SIGCONT)
		select {
		case err = <-e.done:
		case <-time.After(30 * time.Second):
			_ = e.cmd.Process.Kill()
			err = errors.Join(errors.New("etcd did not stop within 30 s of SIGTERM"), <-e.done)
		}
		e.down = true
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil // killed by our signal, or exited non-zero on it: the run is over
	}
	return errors.Join(err, os.RemoveAll(e.DataDir))
}

// WaitHTTP polls url until ok says its answer is ready, for at most a
// minute, or until the process whose exit exited reports ends (its
// error is put back for whoever stops it).
func WaitHTTP(ctx context.Context, url string, ok func(status int, body []byte) bool, exited chan error) error {
	deadline := time.Now().Add(time.Minute)
	client := &http.Client{Timeout: 2 * time.Second, Transport: metrics.NoKeepAlive()}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if ok(resp.StatusCode, b) {
				return nil
			}
		}
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("exited before %s was ready: %v", url, err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within a minute", url)
		}
	}
}

// FreeAddr is a 127.0.0.1 address with a port free now.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
