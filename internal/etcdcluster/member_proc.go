package etcdcluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// memberStopGrace bounds how long a member process may take to stop
// after SIGTERM before it is killed.
const memberStopGrace = 10 * time.Second

// memberProc is one member of a multi-member embedded cluster, running
// in a child process (see MaybeRunMember).
type memberProc struct {
	index int
	dir   string
	cmd   *exec.Cmd
	// ready is closed when the member serves clients, exited when the
	// process is gone and reaped.
	ready, exited chan struct{}
	leader        atomic.Bool
	// failure is the member's own account of why it failed, if it gave
	// one; waitErr is how the process ended. Both are set before exited
	// is closed.
	failure string
	waitErr error
	// killed says the process was killed on purpose (Cluster.KillLeader):
	// its end is not a failure.
	killed atomic.Bool
}

// startMemberProc starts the member described by spec in a child process
// forked by f; changed gets a value (without blocking) on every report
// and on exit. Its stderr (etcd's log) goes line by line into log.
func startMemberProc(f *forker, spec memberSpec, log io.Writer, changed chan<- struct{}) (*memberProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: finding this program to run a member in: %w", err)
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	name := memberName(spec.Index)
	cmd := exec.Command(exe)
	cmd.Args = []string{"etcdbench-" + name} // what ps shows
	cmd.Env = append(memberEnviron(os.Environ()), memberEnv+"="+string(js))
	stderr := &lineWriter{dst: log}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// The kernel kills the member when the thread that forked it
		// ends: f's thread lives as long as the cluster, and ends with
		// the process however it ends, SIGKILL included.
		Pdeathsig: syscall.SIGKILL,
		// Its own process group: Ctrl-C in a terminal reaches etcdbench
		// only, which then stops the members in order.
		Setpgid: true,
	}
	cmd.WaitDelay = time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := f.start(cmd); err != nil {
		return nil, fmt.Errorf("embedded etcd: starting a process for %s: %w", name, err)
	}
	p := &memberProc{index: spec.Index, dir: memberDir(spec.Options.Dir, spec.Index), cmd: cmd,
		ready: make(chan struct{}), exited: make(chan struct{})}
	go p.watch(stdout, stderr, changed)
	return p, nil
}

// watch reads the member's reports until its stdout closes, then reaps it.
func (p *memberProc) watch(stdout io.Reader, log *lineWriter, changed chan<- struct{}) {
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var r memberReport
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.State == "" {
			// Not a member: a program without the hook says why here.
			fmt.Fprintf(log.dst, "%s stdout: %s\n", memberName(p.index), sc.Bytes()) // a whole line, beside the stderr copy
			continue
		}
		switch r.State {
		case reportReady:
			if !p.isReady() {
				close(p.ready)
			}
		case reportLeader, reportFollower:
			p.leader.Store(r.State == reportLeader)
		case reportFailed:
			p.failure = r.Error
		}
		notify()
	}
	io.Copy(io.Discard, stdout) // after a too long line, to let it exit
	p.waitErr = p.cmd.Wait()
	log.flush() // Wait has copied all of stderr
	p.leader.Store(false)
	close(p.exited)
	notify()
}

// isReady reports whether the member reported ready.
func (p *memberProc) isReady() bool {
	select {
	case <-p.ready:
		return true
	default:
		return false
	}
}

// exitErr is why the process ended, or nil while it runs: a member
// never ends on its own, so a clean exit is an error too.
func (p *memberProc) exitErr() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	if err := p.endErr(); err != nil {
		return err
	}
	return fmt.Errorf("embedded etcd: %s in %s exited", memberName(p.index), p.dir)
}

// endErr is the failure of a process that exited: nil after a clean stop.
func (p *memberProc) endErr() error {
	switch {
	case p.killed.Load():
		return nil
	case p.failure != "":
		return errors.New(p.failure)
	case p.waitErr != nil:
		return fmt.Errorf("embedded etcd: %s in %s: process %w", memberName(p.index), p.dir, p.waitErr)
	}
	return nil
}

// stop asks the member to stop (SIGTERM), kills it after grace, and
// waits until it is reaped. A member that is not ready yet is killed at
// once: it holds nothing but a failed start, and etcd takes seconds to
// stop a member that waits for its peers. The error says that a ready
// member had to be killed or that the member had failed.
func (p *memberProc) stop(grace time.Duration) error {
	select {
	case <-p.exited:
		return p.endErr()
	default:
	}
	if !p.isReady() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		if p.failure != "" {
			return errors.New(p.failure)
		}
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
		return p.endErr()
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("embedded etcd: %s in %s did not stop within %v of SIGTERM and was killed", memberName(p.index), p.dir, grace)
	}
}

// stopProcs stops the member processes, followers first.
func (c *Cluster) stopProcs() error {
	errs := make([]error, len(c.procs))
	var wg sync.WaitGroup
	var leaders []*memberProc
	for _, p := range c.procs {
		if p.leader.Load() {
			leaders = append(leaders, p)
			continue
		}
		wg.Go(func() { errs[p.index] = p.stop(memberStopGrace) })
	}
	wg.Wait()
	for _, p := range leaders {
		errs[p.index] = p.stop(memberStopGrace)
	}
	return errors.Join(errs...)
}

// lineWriter writes whole lines to dst, so that the logs of several
// members interleave by line, not by pipe read.
type lineWriter struct {
	dst     io.Writer
	partial []byte
}

// Write passes on the complete lines in p and keeps the rest.
func (w *lineWriter) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	if i := bytes.LastIndexByte(w.partial, '\n'); i >= 0 {
		_, err := w.dst.Write(w.partial[:i+1])
		w.partial = append(w.partial[:0], w.partial[i+1:]...)
		if err != nil {
			return len(p), err
		}
	}
	if len(w.partial) > logBufferBytes {
		w.flush()
	}
	return len(p), nil
}

// flush passes on the incomplete last line, if any.
func (w *lineWriter) flush() {
	if len(w.partial) > 0 {
		w.dst.Write(append(w.partial, '\n'))
		w.partial = w.partial[:0]
	}
}

// forker starts processes from one OS thread that nothing else uses.
// Pdeathsig fires when the thread that forked a child ends, not the
// process: a child forked from an ordinary thread would be killed when
// Go ends that thread, which it does when a goroutine that locked it
// (internal/disk does) returns without unlocking.
type forker struct {
	reqs chan func()
	once sync.Once
}

func newForker() *forker {
	f := &forker{reqs: make(chan func())}
	go func() {
		runtime.LockOSThread()
		for fn := range f.reqs {
			fn()
		}
		// Return locked: the thread ends, and takes any member that
		// is still running with it.
	}()
	return f
}

// start starts cmd on the forker's thread.
func (f *forker) start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	f.reqs <- func() { done <- cmd.Start() }
	return <-done
}

// close ends the forker's thread; call it once every member it started
// is stopped.
func (f *forker) close() { f.once.Do(func() { close(f.reqs) }) }

// secretEnv are environment variables a member process must not inherit:
// the password of --user is for the load's client, not for etcd.
var secretEnv = []string{"ETCDBENCH_PASSWORD"}

// memberEnviron is env without secretEnv.
func memberEnviron(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(secretEnv, name) {
			out = append(out, kv)
		}
	}
	return out
}
