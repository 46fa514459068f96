package main

import (
	"context"
	"errors"
	"fmt"
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
// etcd of go.mod (bench/data-vs-etcd's member helper), each a process of
// its own on a data dir it keeps.
type kind struct {
	Name string
	Slug string // in flags (--etcds) and figure names
	// args is the command that runs the member m.
	args func(m *member) []string
}

// snapshotCount is both etcds' --snapshot-count (3.6's default, the
// embedded etcd's): the fill ends with more small writes than this, so
// that the last raft snapshot comes after the large objects and a
// restarted member holds only small entries of its log in memory.
const snapshotCount = "10000"

// quota keeps both etcds' quota (2 GiB by default in 3.4) above the
// largest db.
const quota = "8589934592"

func debianKind(bin string) kind {
	return kind{Name: "etcd 3.4 (Debian)", Slug: "debian", args: func(m *member) []string {
		return []string{bin, "--name", "mem", "--data-dir", m.dataDir, "--listen-client-urls", m.client, "--advertise-client-urls", m.client,
			"--listen-peer-urls", m.peer, "--initial-advertise-peer-urls", m.peer, "--initial-cluster", "mem=" + m.peer,
			"--snapshot-count", snapshotCount, "--quota-backend-bytes", quota, "--logger", "zap", "--log-level", "warn"}
	}}
}

func embeddedKind(bin string) kind {
	return kind{Name: "embedded (go.mod's etcd)", Slug: "embedded", args: func(m *member) []string {
		return []string{bin, "--name", "mem", "--data-dir", m.dataDir, "--client-url", m.client, "--peer-url", m.peer,
			"--snapshot-count", snapshotCount, "--quota-backend-bytes", quota}
	}}
}

// member is one etcd with its data dir, started and stopped again on the
// same URLs, so that each start after the first is a restart.
type member struct {
	kind         kind
	dataDir      string
	target       string // the db's size as asked of the fill, for tables
	size         int64
	client, peer string
	cmd          *exec.Cmd
	done         chan error
	// exit is how the last process ended, once it did.
	exit *os.ProcessState
}

func newMember(k kind, dataDir string, size int64, target string) (*member, error) {
	c, err := cmp.FreeAddr()
	if err != nil {
		return nil, err
	}
	p, err := cmp.FreeAddr()
	if err != nil {
		return nil, err
	}
	return &member{kind: k, dataDir: dataDir, size: size, target: target, client: "http://" + c, peer: "http://" + p}, nil
}

// start runs the member, through wrap (a cgroup's; nil: none), and waits
// until its /health says true.
func (m *member) start(ctx context.Context, wrap func(*exec.Cmd)) error {
	args := m.kind.args(m)
	m.cmd = exec.Command(args[0], args[1:]...)
	if wrap != nil {
		wrap(m.cmd)
	}
	log, err := os.OpenFile(m.dataDir+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	m.cmd.Stdout, m.cmd.Stderr = log, log
	m.done, m.exit = make(chan error, 1), nil
	if err := m.cmd.Start(); err != nil {
		m.cmd = nil
		return fmt.Errorf("starting %s: %w", m.kind.Name, err)
	}
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(m.cmd, m.done)
	if err := cmp.WaitHealthy(ctx, m.client+"/health", m.done, 20*time.Millisecond); err != nil {
		return errors.Join(fmt.Errorf("%s in %s: %w", m.kind.Name, m.dataDir, err), m.stop())
	}
	return nil
}

// pid is the running member's process id.
func (m *member) pid() int { return m.cmd.Process.Pid }

// exited says whether the member's process has ended (killed, say), and
// reaps it.
func (m *member) exited() bool {
	if m.cmd == nil {
		return true
	}
	select {
	case <-m.done:
		m.exit, m.cmd = m.cmd.ProcessState, nil
		return true
	default:
		return false
	}
}

// killedBy is the signal that ended the member's last process, 0 when it
// runs or ended otherwise.
func (m *member) killedBy() syscall.Signal {
	if m.exit == nil {
		return 0
	}
	if ws, ok := m.exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

// stop stops the member with SIGTERM (SIGKILL after 60 s) and waits; a
// member that already exited (OOM-killed) is only reaped.
func (m *member) stop() error {
	if m.cmd == nil {
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
	m.exit, m.cmd = m.cmd.ProcessState, nil
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

// hasSnapshot says whether dataDir's member/snap holds a *.snap.
func hasSnapshot(dataDir string) (bool, error) {
	snaps, err := filepath.Glob(filepath.Join(dataDir, "member", "snap", "*.snap"))
	return len(snaps) > 0, err
}
