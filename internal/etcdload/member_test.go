package etcdload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphanHelperEnv makes the test binary a stand-in for etcdbench that
// starts a 3-member cluster in the directory the variable names, prints
// its members' process ids and waits to be killed.
const orphanHelperEnv = "ETCDLOAD_TEST_ORPHAN_HELPER"

// runOrphanHelper is the test binary run with orphanHelperEnv.
func runOrphanHelper(dir string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := StartEmbedded(ctx, Options{Dir: dir, Members: 3})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	if err := json.NewEncoder(os.Stdout).Encode(c.pids()); err != nil {
		return 1
	}
	<-ctx.Done() // killed long before
	return 0
}

// pids are the member processes' ids.
func (c *Cluster) pids() []int {
	var out []int
	for _, p := range c.procs {
		out = append(out, p.cmd.Process.Pid)
	}
	return out
}

// memberProcessAlive reports whether pid is a member process that has not
// exited: it exists, is not a zombie, and is named etcdbench-member*.
func memberProcessAlive(t *testing.T, pid int) bool {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return false
	}
	if err != nil {
		t.Fatalf("reading the state of process %d: %v", pid, err)
	}
	// pid (comm) state ...: comm may hold spaces, the state follows the
	// last parenthesis.
	if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.HasPrefix(cmdline, []byte("etcdbench-member"))
}

// waitGone waits up to 15 s for every pid to be gone.
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var alive []int
		for _, pid := range pids {
			if memberProcessAlive(t, pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range alive {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("member processes %v still run", alive)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestEmbeddedMembersDieWithParent(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), orphanHelperEnv+"="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line := make(chan []byte, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		line <- sc.Bytes()
	}()
	var pids []int
	select {
	case l := <-line:
		if err := json.Unmarshal(l, &pids); err != nil || len(pids) != 3 {
			cmd.Process.Kill()
			cmd.Wait()
			killed = true
			t.Fatalf("helper printed %q, want 3 process ids (%v); stderr:\n%s", l, err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the helper did not start its cluster within 60 s")
	}
	for _, pid := range pids {
		if !memberProcessAlive(t, pid) || pid == cmd.Process.Pid {
			t.Fatalf("process %d is not a running member (helper %d)", pid, cmd.Process.Pid)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true
	waitGone(t, pids)
}

func TestEmbeddedThreeMembersRetryBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	calls := 0
	pick := func(n int) ([]int, error) {
		calls++
		ports, err := freePorts(n)
		if calls == 1 && err == nil {
			ports[3] = busy.Addr().(*net.TCPAddr).Port // member1's peer port
		}
		return ports, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := startEmbedded(ctx, Options{Dir: t.TempDir(), Members: 3}, pick)
	if err != nil {
		t.Fatalf("start with a busy port first: %v", err)
	}
	defer c.Close()
	if calls != 2 {
		t.Errorf("ports picked %d times, want 2 (a retry after the busy port)", calls)
	}
	if !strings.Contains(c.Log(), "address already in use") {
		t.Errorf("the log does not mention the busy port:\n%s", c.Log())
	}
	if _, err := c.Leader(ctx); err != nil {
		t.Errorf("after the retry: %v", err)
	}
}

func TestEmbeddedThreeMembersNeedHook(t *testing.T) {
	hookCalled.Store(false)
	defer hookCalled.Store(true)
	_, err := StartEmbedded(context.Background(), Options{Dir: t.TempDir(), Members: 3})
	if err == nil || !strings.Contains(err.Error(), "MaybeRunMember") {
		t.Errorf("3 members without the hook: %v, want an error naming MaybeRunMember", err)
	}
}

func TestLineWriter(t *testing.T) {
	var dst bytes.Buffer
	w := &lineWriter{dst: &dst}
	for _, s := range []string{"a", "b\nc", "d\ne\n", "f"} {
		w.Write([]byte(s))
	}
	if got := dst.String(); got != "ab\ncd\ne\n" {
		t.Errorf("before flush: %q", got)
	}
	w.flush()
	if got := dst.String(); got != "ab\ncd\ne\nf\n" {
		t.Errorf("after flush: %q", got)
	}
}
