package zoo

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
)

// BusyThreads is how many CPU-bound neighbours a busy storage runs: twice
// the machine's CPUs, so that every CPU has a neighbour ready to run
// whenever etcd's threads wake (a control-plane node under load).
func BusyThreads() int { return 2 * runtime.NumCPU() }

// Busy is s on a machine whose CPUs neighbours saturate: threads
// processes of their own (not in the place's cgroup), each spinning on a
// CPU at the default priority, from setup until the place is closed. Its
// name is "busy" for the plain directory and "busy-" + s's name for
// another storage.
func Busy(s Storage, threads int) Storage {
	name := "busy"
	if s.Name != Plain().Name {
		name += "-" + s.Name
	}
	inner := s.setup
	return Storage{Name: name, InCgroup: s.InCgroup,
		About: fmt.Sprintf("%s, on a machine whose CPUs %d CPU-bound processes of other owners keep busy", s.About, threads),
		setup: func(ctx context.Context, dir string, p *Place) error {
			if inner != nil {
				if err := inner(ctx, dir, p); err != nil {
					return err
				}
			}
			stop, err := startSpinners(threads)
			if err != nil {
				return err
			}
			p.onClose(stop)
			p.Neighbours = threads
			return nil
		}}
}

// startSpinners starts n processes that each spin on a CPU until stop
// kills them; the kernel kills them too if this process dies first.
func startSpinners(n int) (stop func() error, err error) {
	if n <= 0 {
		return nil, fmt.Errorf("busy: %d neighbours: want at least one", n)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		return nil, fmt.Errorf("%w: busy neighbours need sh: %v", ErrUnavailable, err)
	}
	var cmds []*exec.Cmd
	stop = func() error {
		var errs []error
		for _, c := range cmds {
			if err := c.Process.Kill(); err != nil {
				errs = append(errs, err)
			}
			_ = c.Wait() // killed: its error is the signal
		}
		return errors.Join(errs...)
	}
	for range n {
		c := exec.Command(sh, "-c", "while :; do :; done")
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			return nil, errors.Join(fmt.Errorf("busy: starting a neighbour: %w", err), stop())
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}
