package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/testutil"
)

// openPTY returns the two ends of a new pseudo-terminal, or skips the test
// when the system has none.
func openPTY(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	fd := int(ptmx.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pseudo-terminal's other end: %v", err)
	}
	return ptmx, pts
}

// promptPut runs a put with --user NAME and stdin and stderr on a
// pseudo-terminal, types password at the prompt, and returns the result
// and everything the terminal showed.
func promptPut(t *testing.T, args []string, password string) (runResult, string) {
	t.Helper()
	ptmx, pts := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stderr, cmd.Stdout = pts, pts, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	var mu sync.Mutex
	var screen bytes.Buffer
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			mu.Lock()
			screen.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	shown := func() string { mu.Lock(); defer mu.Unlock(); return screen.String() }
	if !testutil.Poll(10*time.Second, func() bool { return strings.Contains(shown(), "Password for") }) {
		t.Fatalf("no password prompt; the terminal shows %q", shown())
	}
	if _, err := ptmx.WriteString(password + "\n"); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("waiting for etcdbench: %v", err)
	}
	select {
	case <-readDone:
	case <-time.After(2 * time.Second):
	}
	return runResult{stdout: stdout.String(), code: cmd.ProcessState.ExitCode()}, shown()
}
