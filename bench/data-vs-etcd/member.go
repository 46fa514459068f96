package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcdbench/bench/internal/cmp"
)

// kind is one etcd the bench runs: Debian's etcd 3.4 or the embedded
// etcd of go.mod (the member helper), each a process of its own.
type kind struct {
	Name string
	// args is the command that runs a member with its data in dataDir on
	// the client and peer URLs.
	args func(dataDir, client, peer string) []string
}

// quota keeps both etcds' quota (2 GiB by default in 3.4) above the
// largest db.
const quota = "8589934592"

func debianKind(bin string) kind {
	return kind{Name: "etcd 3.4 (Debian)", args: func(d, c, p string) []string {
		return []string{bin, "--name", "data", "--data-dir", d, "--listen-client-urls", c, "--advertise-client-urls", c,
			"--listen-peer-urls", p, "--initial-advertise-peer-urls", p, "--initial-cluster", "data=" + p,
			"--quota-backend-bytes", quota, "--logger", "zap", "--log-level", "warn"}
	}}
}

func embeddedKind(bin string) kind {
	return kind{Name: "embedded (go.mod's etcd)", args: func(d, c, p string) []string {
		return []string{bin, "--data-dir", d, "--client-url", c, "--peer-url", p, "--quota-backend-bytes", quota}
	}}
}

// member is one etcd with its data dir, started and stopped again
// on the same URLs, so that each start after the first is a restart.
type member struct {
	kind         kind
	dataDir      string
	target       string // the db's size as asked of the fill, for tables
	client, peer string
	cmd          *exec.Cmd
	done         chan error
}

func newMember(k kind, dataDir, target string) (*member, error) {
	c, err := cmp.FreeAddr()
	if err != nil {
		return nil, err
	}
	p, err := cmp.FreeAddr()
	if err != nil {
		return nil, err
	}
	return &member{kind: k, dataDir: dataDir, target: target, client: "http://" + c, peer: "http://" + p}, nil
}

// start runs the member and returns the time from the process's start
// until its /health said true.
func (m *member) start(ctx context.Context) (time.Duration, error) {
	args := m.kind.args(m.dataDir, m.client, m.peer)
	m.cmd = exec.Command(args[0], args[1:]...)
	log, err := os.OpenFile(filepath.Join(filepath.Dir(m.dataDir), filepath.Base(m.dataDir)+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	m.cmd.Stdout, m.cmd.Stderr = log, log
	m.done = make(chan error, 1)
	t0 := time.Now()
	if err := m.cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", m.kind.Name, err)
	}
	go func() { m.done <- m.cmd.Wait() }()
	if err := waitHealthy(ctx, m.client+"/health", m.done); err != nil {
		return 0, errors.Join(fmt.Errorf("%s in %s: %w", m.kind.Name, m.dataDir, err), m.stop())
	}
	return time.Since(t0), nil
}

// waitHealthy polls url every 10 ms until etcd says it is healthy, for
// at most 5 minutes (a 1 GB db on a slow disk), or the process exits.
func waitHealthy(ctx context.Context, url string, exited chan error) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(b.Bytes(), []byte(`"health":"true"`)) {
				return nil
			}
		}
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("exited before it was healthy: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return fmt.Errorf("not healthy within 5 minutes at %s", url)
}

// stop stops the member with SIGTERM (SIGKILL after 60 s) and waits.
func (m *member) stop() error {
	if m.cmd == nil || m.cmd.Process == nil {
		return nil
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-m.done:
	case <-time.After(60 * time.Second):
		_ = m.cmd.Process.Kill()
		err = errors.Join(errors.New("etcd did not stop within 60 s of SIGTERM"), <-m.done)
	}
	m.cmd = nil
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil // stopped by our signal
	}
	return err
}

// withClient calls f with a client of the running member.
func (m *member) withClient(f func(*clientv3.Client) error) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.client}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	return f(cli)
}
