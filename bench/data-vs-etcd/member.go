package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	// args is the command that runs the member m.
	args func(m *member) []string
}

// snapshotCount is both etcds' --snapshot-count: 3.6's default, which
// the embedded etcd has; 3.4's own (100,000) would leave a 100 MB db
// without a snapshot, and a member without one replays its whole log to
// a new member instead of sending its db.
const snapshotCount = "10000"

// quota keeps both etcds' quota (2 GiB by default in 3.4) above the
// largest db.
const quota = "8589934592"

func debianKind(bin string) kind {
	return kind{Name: "etcd 3.4 (Debian)", args: func(m *member) []string {
		var metrics []string
		if m.metrics != "" {
			metrics = []string{"--listen-metrics-urls", m.metrics}
		}
		return append([]string{bin, "--name", m.name, "--data-dir", m.dataDir, "--listen-client-urls", m.client, "--advertise-client-urls", m.client,
			"--listen-peer-urls", m.peer, "--initial-advertise-peer-urls", m.peer, "--initial-cluster", m.initialCluster(),
			"--initial-cluster-state", m.state(), "--snapshot-count", snapshotCount,
			"--quota-backend-bytes", quota, "--logger", "zap", "--log-level", "warn"}, metrics...)
	}}
}

func embeddedKind(bin string) kind {
	return kind{Name: "embedded (go.mod's etcd)", args: func(m *member) []string {
		return []string{bin, "--name", m.name, "--data-dir", m.dataDir, "--client-url", m.client, "--peer-url", m.peer,
			"--initial-cluster", m.initialCluster(), "--initial-cluster-state", m.state(), "--snapshot-count", snapshotCount,
			"--metrics-url", m.metrics, "--quota-backend-bytes", quota}
	}}
}

// member is one etcd with its data dir, started and stopped again
// on the same URLs, so that each start after the first is a restart.
type member struct {
	kind         kind
	name         string
	dataDir      string
	target       string // the db's size as asked of the fill, for tables
	client, peer string
	// metrics is the URL of a listener for /metrics alone (empty: none):
	// etcd serves it from the start, and its client URL only once the
	// member is ready, which a new member is after it caught up.
	metrics string
	// joins is the member this one joins as a new member (nil: it is a
	// single-member cluster of its own).
	joins *member
	cmd   *exec.Cmd
	done  chan error
}

// initialCluster is --initial-cluster: the member alone, or the member
// it joins and itself.
func (m *member) initialCluster() string {
	c := m.name + "=" + m.peer
	if m.joins != nil {
		c = m.joins.initialCluster() + "," + c
	}
	return c
}

// state is --initial-cluster-state.
func (m *member) state() string {
	if m.joins != nil {
		return "existing"
	}
	return "new"
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
	return &member{kind: k, name: "data", dataDir: dataDir, target: target, client: "http://" + c, peer: "http://" + p}, nil
}

// start runs the member and returns the time from the process's start
// until its /health said true; a member that joins another is only
// started.
func (m *member) start(ctx context.Context) (time.Duration, error) {
	args := m.kind.args(m)
	m.cmd = exec.Command(args[0], args[1:]...)
	log, err := os.OpenFile(m.logPath(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
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
	if m.joins != nil {
		return 0, nil // a learner is not healthy to /health until it has caught up
	}
	if err := cmp.WaitHealthy(ctx, m.client+"/health", m.done, 10*time.Millisecond); err != nil {
		return 0, errors.Join(fmt.Errorf("%s in %s: %w", m.kind.Name, m.dataDir, err), m.stop())
	}
	return time.Since(t0), nil
}

// logPath is the file beside the data dir that etcd's output goes to.
func (m *member) logPath() string { return m.dataDir + ".log" }

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

// ensureSnapshot makes sure m's data dir holds a raft snapshot (a *.snap
// beside the db), so that its restarted member's log starts there and a
// new member is sent the db: a data dir filled with 3.4's default
// --snapshot-count has none below 100,000 entries. Started with
// snapshotCount, etcd takes one at its first apply (the new term's
// entry) when more entries than that were applied since the last.
func ensureSnapshot(ctx context.Context, m *member, stderr io.Writer) error {
	if ok, err := hasSnapshot(m.dataDir); ok || err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s has no snapshot; starting it with --snapshot-count %s to take one\n", m.dataDir, snapshotCount)
	if _, err := m.start(ctx); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ok, err := hasSnapshot(m.dataDir)
		if ok || err != nil {
			return errors.Join(err, m.stop())
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("%s took no snapshot within 2 minutes (fewer than %s entries applied?)", m.dataDir, snapshotCount), m.stop())
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), m.stop())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// hasSnapshot says whether dataDir's member/snap holds a *.snap.
func hasSnapshot(dataDir string) (bool, error) {
	snaps, err := filepath.Glob(filepath.Join(dataDir, "member", "snap", "*.snap"))
	return len(snaps) > 0, err
}
