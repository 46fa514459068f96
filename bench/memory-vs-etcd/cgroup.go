package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// memRoot is where cgroup v1's memory controller is mounted (this bench
// needs it: the machines it runs on have hybrid cgroups).
const memRoot = "/sys/fs/cgroup/memory"

// cgroupPrefix begins the name of every cgroup the bench makes, followed
// by the bench's PID: a cgroup whose PID is gone was left by a killed
// run, and the next run removes it (removeStale).
const cgroupPrefix = "etcdbench-memory-vs-etcd-"

// memCgroup is a cgroup v1 memory cgroup of its own whose processes may
// use limit bytes of memory (page cache they fault in included) and, when
// the kernel has swap accounting, as much memory and swap together, so
// that a process over the limit is OOM-killed instead of swapped out.
type memCgroup struct {
	path  string
	limit int64
	memsw bool // memory.memsw.limit_in_bytes was set too
}

// newMemCgroup makes the cgroup memRoot/<prefix><pid>-<tag> with limit.
func newMemCgroup(tag string, limit int64) (*memCgroup, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the OOM check makes a memory cgroup: run as root, or pass --oom=false")
	}
	if _, err := os.Stat(filepath.Join(memRoot, "memory.limit_in_bytes")); err != nil {
		return nil, fmt.Errorf("the OOM check needs cgroup v1's memory controller at %s (or pass --oom=false): %w", memRoot, err)
	}
	c := &memCgroup{path: filepath.Join(memRoot, fmt.Sprintf("%s%d-%s", cgroupPrefix, os.Getpid(), tag)), limit: limit}
	if err := os.Mkdir(c.path, 0o755); err != nil {
		return nil, fmt.Errorf("making cgroup %s: %w", c.path, err)
	}
	if err := c.write("memory.limit_in_bytes", strconv.FormatInt(limit, 10)); err != nil {
		return nil, errors.Join(err, c.remove())
	}
	// Without swap accounting the file is not there, and with no swap
	// configured there is nothing to swap to either.
	if _, err := os.Stat(filepath.Join(c.path, "memory.memsw.limit_in_bytes")); err == nil {
		if err := c.write("memory.memsw.limit_in_bytes", strconv.FormatInt(limit, 10)); err != nil {
			return nil, errors.Join(err, c.remove())
		}
		c.memsw = true
	}
	return c, nil
}

func (c *memCgroup) write(file, v string) error {
	if err := os.WriteFile(filepath.Join(c.path, file), []byte(v), 0); err != nil {
		return fmt.Errorf("writing %q to %s: %w", v, filepath.Join(c.path, file), err)
	}
	return nil
}

// wrap rewrites cmd, not yet started, so that it joins the cgroup before
// it runs: a shell writes its own PID to cgroup.procs, then execs cmd's
// program (the PID stays the program's). Everything the program then
// allocates or faults in is charged to the cgroup.
func (c *memCgroup) wrap(cmd *exec.Cmd) {
	args := append([]string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(c.path, "cgroup.procs"), cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = "/bin/sh", args
}

// oomKills is the kernel's count of processes it OOM-killed in the cgroup
// (memory.oom_control's oom_kill, Linux 4.13 and later).
func (c *memCgroup) oomKills() (int64, error) {
	b, err := os.ReadFile(filepath.Join(c.path, "memory.oom_control"))
	if err != nil {
		return 0, err
	}
	return parseOOMKills(b)
}

// parseOOMKills reads oom_kill from a memory.oom_control file.
func parseOOMKills(b []byte) (int64, error) {
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("memory.oom_control has no oom_kill count (a kernel before 4.13?)")
}

// usage is the cgroup's charged memory now and its peak since the last
// resetPeak (memory.usage_in_bytes, memory.max_usage_in_bytes).
func (c *memCgroup) usage() (now, peak int64) {
	now, _ = readInt(filepath.Join(c.path, "memory.usage_in_bytes"))
	peak, _ = readInt(filepath.Join(c.path, "memory.max_usage_in_bytes"))
	return now, peak
}

// resetPeak restarts memory.max_usage_in_bytes from the usage now.
func (c *memCgroup) resetPeak() error { return c.write("memory.max_usage_in_bytes", "0") }

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// remove kills what still runs in the cgroup (only ever a member this run
// started) and removes it.
func (c *memCgroup) remove() error { return removeCgroup(c.path) }

// removeCgroup SIGKILLs the processes in the cgroup at path and removes
// it, retrying while the kernel still counts the dead processes in it.
func removeCgroup(path string) error {
	var err error
	for i := 0; i < 50; i++ {
		if b, rerr := os.ReadFile(filepath.Join(path, "cgroup.procs")); rerr == nil {
			for _, f := range strings.Fields(string(b)) {
				if pid, perr := strconv.Atoi(f); perr == nil && pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if err = os.Remove(path); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("removing cgroup %s: %w", path, err)
}

// removeStale removes the cgroups a killed run of the bench left: those
// named with a PID that no longer runs.
func removeStale() error {
	dirs, err := filepath.Glob(filepath.Join(memRoot, cgroupPrefix+"*"))
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), cgroupPrefix), "-")
		n, err := strconv.Atoi(pid)
		if err != nil || n == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", n)); err == nil {
			continue // another run's, still going
		}
		errs = append(errs, removeCgroup(d))
	}
	return errors.Join(errs...)
}
