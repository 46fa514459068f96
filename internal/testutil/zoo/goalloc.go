package zoo

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// goallocSource is the Go neighbour's program (goalloc/main.go, a
// command of its own that go vet and the tests build too): GoAlloc builds
// it into a temporary module, so that the zoo needs a Go toolchain but
// not the repository's working directory.
//
//go:embed goalloc/main.go
var goallocSource []byte

// GoAllocSpec is the Go neighbour's shape: the live heap it keeps and
// the short-lived objects it allocates.
type GoAllocSpec struct {
	LiveMiB        int // live heap kept
	AllocMiBPerSec int // short-lived objects allocated, all goroutines together
	// MinKiB and MaxKiB bound the short-lived objects' sizes.
	MinKiB, MaxKiB int
	// KeepEvery: one in this many short-lived objects replaces a live one.
	KeepEvery int
}

// DefaultGoAlloc is kube-apiserver's shape on a busy control-plane node:
// a live heap of 128 MiB of small pointer-bearing objects (marked at
// 180-200 MB, floating garbage included) and 320 MiB/s of 1-8 KiB objects,
// one in 16 kept. Alone on this 2-CPU VM its collector ran about two
// cycles a second, each marking for 190-280 ms of the 550 ms between
// them, its goroutines assisting, on both CPUs (GODEBUG=gctrace=1).
var DefaultGoAlloc = GoAllocSpec{LiveMiB: 128, AllocMiBPerSec: 320, MinKiB: 1, MaxKiB: 8, KeepEvery: 16}

func (s GoAllocSpec) args() []string {
	return []string{"-live-mib", strconv.Itoa(s.LiveMiB), "-alloc-mib-per-sec", strconv.Itoa(s.AllocMiBPerSec),
		"-min-kib", strconv.Itoa(s.MinKiB), "-max-kib", strconv.Itoa(s.MaxKiB), "-keep-every", strconv.Itoa(s.KeepEvery)}
}

// GoAlloc is s beside a Go process that allocates and collects as
// kube-apiserver does (GoAllocSpec), a process of its own outside the
// place's cgroup (it does no disk I/O), from setup until the place is
// closed. Its name is "go-alloc" for the plain directory and
// "go-alloc-" + s's name for another storage; Busy(GoAlloc(Plain(), ...))
// is "busy-go-alloc".
func GoAlloc(s Storage, spec GoAllocSpec) Storage {
	name := "go-alloc"
	if s.Name != Plain().Name {
		name += "-" + s.Name
	}
	inner := s.setup
	return Storage{Name: name, InCgroup: s.InCgroup,
		About: fmt.Sprintf("%s, beside a Go process as kube-apiserver (a %d MiB live heap, %d MiB/s of %d-%d KiB objects, its collector marking on every CPU)",
			s.About, spec.LiveMiB, spec.AllocMiBPerSec, spec.MinKiB, spec.MaxKiB),
		setup: func(ctx context.Context, dir string, p *Place) error {
			if inner != nil {
				if err := inner(ctx, dir, p); err != nil {
					return err
				}
			}
			g, err := startGoAlloc(ctx, spec)
			if err != nil {
				return err
			}
			p.onClose(g.stop)
			p.GoAlloc = g
			return nil
		}}
}

// GoAllocStats are the Go neighbour's latest figures (runtime/metrics,
// printed each second).
type GoAllocStats struct {
	// GCCycles is how many collections it has finished.
	GCCycles uint64
	// GCCPUSeconds is the runtime's estimate of its collector's CPU time,
	// TotalCPUSeconds of all it had (GOMAXPROCS x its wall time).
	GCCPUSeconds, TotalCPUSeconds float64
	// HeapBytes is its heap's objects, live and not yet collected;
	// AllocatedBytes all it has allocated.
	HeapBytes, AllocatedBytes uint64
}

// GoAllocator is a running Go neighbour (GoAlloc).
type GoAllocator struct {
	cmd   *exec.Cmd
	stdin io.Closer
	bin   string // the temporary directory of its binary
	errb  *strings.Builder
	done  chan error

	mu    sync.Mutex
	stats GoAllocStats
}

// PID is the neighbour's process id.
func (g *GoAllocator) PID() int { return g.cmd.Process.Pid }

// Stats are its figures of the last second.
func (g *GoAllocator) Stats() GoAllocStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats
}

// goallocReady is how long the neighbour may take to build (a cold build
// cache) and to make its live heap.
const goallocReady = 2 * time.Minute

// buildGoAlloc builds the neighbour's program into a new temporary
// directory, which the caller removes.
func buildGoAlloc(ctx context.Context) (bin, exe string, err error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", "", fmt.Errorf("%w: the Go neighbour is built with a Go toolchain: %v", ErrUnavailable, err)
	}
	bin, err = os.MkdirTemp("", "zoo-goalloc-")
	if err != nil {
		return "", "", err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, os.RemoveAll(bin))
		}
	}()
	src := filepath.Join(bin, "src")
	if err := os.Mkdir(src, 0o700); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module goalloc\n\ngo 1.22\n"), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), goallocSource, 0o600); err != nil {
		return "", "", err
	}
	exe = filepath.Join(bin, "goalloc")
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", exe, ".")
	cmd.Dir = src
	// A module of its own: no workspace, vendor directory or toolchain
	// download of the caller's applies.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building the Go neighbour: %w: %s", err, strings.TrimSpace(string(b)))
	}
	return bin, exe, nil
}

// startGoAlloc builds and starts the neighbour and waits until its live
// heap is made. The kernel kills it if this process dies first, and it
// exits by itself when its stdin closes.
func startGoAlloc(ctx context.Context, spec GoAllocSpec) (*GoAllocator, error) {
	if spec.LiveMiB <= 0 || spec.AllocMiBPerSec <= 0 || spec.MinKiB <= 0 || spec.MaxKiB < spec.MinKiB || spec.KeepEvery < 1 {
		return nil, fmt.Errorf("go-alloc: %+v: want a positive live heap, rate, sizes (max at least min) and keep-every", spec)
	}
	bin, exe, err := buildGoAlloc(ctx)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, spec.args()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	g := &GoAllocator{cmd: cmd, bin: bin, errb: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stderr = g.errb // read only after Wait
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(bin))
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(bin))
	}
	g.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("go-alloc: starting the Go neighbour: %w", err), os.RemoveAll(bin))
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		isReady := false
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "ready ") {
				if !isReady {
					close(ready)
					isReady = true
				}
				continue
			}
			if s, ok := parseGoAllocStats(line); ok {
				g.mu.Lock()
				g.stats = s
				g.mu.Unlock()
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		g.done <- cmd.Wait()
	}()
	t := time.NewTimer(goallocReady)
	defer t.Stop()
	select {
	case <-ready:
		return g, nil
	case <-t.C:
		err = fmt.Errorf("go-alloc: the Go neighbour did not make its live heap within %v", goallocReady)
	case <-ctx.Done():
		err = ctx.Err()
	}
	return nil, errors.Join(err, g.stop())
}

// parseGoAllocStats reads one of the neighbour's "stats CYCLES GC_CPU
// TOTAL_CPU HEAP ALLOCATED" lines.
func parseGoAllocStats(line string) (GoAllocStats, bool) {
	f := strings.Fields(line)
	if len(f) != 6 || f[0] != "stats" {
		return GoAllocStats{}, false
	}
	var s GoAllocStats
	var errs [5]error
	s.GCCycles, errs[0] = strconv.ParseUint(f[1], 10, 64)
	s.GCCPUSeconds, errs[1] = strconv.ParseFloat(f[2], 64)
	s.TotalCPUSeconds, errs[2] = strconv.ParseFloat(f[3], 64)
	s.HeapBytes, errs[3] = strconv.ParseUint(f[4], 10, 64)
	s.AllocatedBytes, errs[4] = strconv.ParseUint(f[5], 10, 64)
	if errors.Join(errs[:]...) != nil {
		return GoAllocStats{}, false
	}
	return s, true
}

// stop closes the neighbour's stdin, which ends it, and waits; SIGKILL
// after 10 s. It removes the neighbour's binary.
func (g *GoAllocator) stop() error {
	g.stdin.Close()
	var err error
	select {
	case err = <-g.done:
		if err != nil {
			err = fmt.Errorf("go-alloc: the Go neighbour: %w: %s", err, strings.TrimSpace(g.errb.String()))
		}
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
		err = errors.New("go-alloc: the Go neighbour did not stop within 10 s of its stdin closing; killed")
	}
	return errors.Join(err, os.RemoveAll(g.bin))
}
