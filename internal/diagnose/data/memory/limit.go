// Package memory is what a LIST costs an etcd member's memory: the
// memory limit a member runs under (its cgroup's, or the machine's), a
// probe that measures on a member of this etcd build what one full
// unpaginated LIST, several at once and paginated ones add to its
// resident memory per listed byte, and the predictions for the
// resources of a database from it.
package memory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Limit is the memory a member may use and where that figure comes from.
type Limit struct {
	Bytes int64
	// From says where it was read: "--memory-limit", "cgroup v1
	// memory.limit_in_bytes (/kubepods/...)", "cgroup v2 memory.max
	// (...)", "the machine's MemTotal"; Bytes is 0 when it is unknown,
	// and From says why.
	From string
}

// Known says whether the limit is known.
func (l Limit) Known() bool { return l.Bytes > 0 }

// unlimited is what cgroup v1 says of no limit (a page-rounded
// int64 max); anything this large is no limit.
const unlimited = math.MaxInt64 / 2

// ParseCgroup is the cgroup path of the memory controller in a
// /proc/PID/cgroup file: v1's "N:memory:/path" (or a combined
// "memory,..." line), or v2's "0::/path"; v2 says whether it is the
// unified hierarchy's.
func ParseCgroup(b []byte) (path string, v2 bool, err error) {
	var unified string
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified, found = parts[2], true
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				return parts[2], false, nil
			}
		}
	}
	if found {
		return unified, true, nil
	}
	return "", false, errors.New("memory: no memory controller in the cgroup file")
}

// ParseLimit reads a cgroup memory limit file's content: a number of
// bytes, or "max" (v2) for none (0).
func ParseLimit(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("memory: limit %q is not a number of bytes", s)
	}
	if n >= unlimited {
		return 0, nil
	}
	return n, nil
}

// LimitOf is the memory limit of process pid under root ("/" but in
// tests): its cgroup's memory limit, or, when its cgroup sets none, the
// machine's MemTotal; pid 0 is a process not on this machine (or none):
// the machine's. A cgroup that cannot be read leaves the limit unknown
// (Bytes 0), From saying why: the member may be held to less than the
// machine.
func LimitOf(root string, pid int) Limit {
	machine := machineLimit(root)
	if pid <= 0 {
		return machine
	}
	unknown := func(why string, args ...any) Limit {
		return Limit{From: "unknown: " + fmt.Sprintf(why, args...)}
	}
	b, err := os.ReadFile(filepath.Join(root, "proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return unknown("the member's cgroup could not be read: %v", err)
	}
	path, v2, err := ParseCgroup(b)
	if err != nil {
		return unknown("%v", err)
	}
	file, words := filepath.Join(root, "sys/fs/cgroup/memory", path, "memory.limit_in_bytes"), "cgroup v1 memory.limit_in_bytes"
	if v2 {
		file, words = filepath.Join(root, "sys/fs/cgroup", path, "memory.max"), "cgroup v2 memory.max"
		if _, err := os.Stat(file); err != nil {
			// A hybrid hierarchy mounts the unified one apart.
			file = filepath.Join(root, "sys/fs/cgroup/unified", path, "memory.max")
		}
	}
	lb, err := os.ReadFile(file)
	if err != nil {
		return unknown("the member's %s could not be read: %v", words, err)
	}
	n, err := ParseLimit(lb)
	switch {
	case err != nil:
		return unknown("%v", err)
	case n == 0:
		machine.From += fmt.Sprintf(" (the member's cgroup %s sets none)", path)
		return machine
	case machine.Known() && n > machine.Bytes:
		machine.From += fmt.Sprintf(" (the member's cgroup %s allows more)", path)
		return machine
	}
	return Limit{Bytes: n, From: fmt.Sprintf("%s (%s)", words, path)}
}

// machineLimit is the machine's MemTotal.
func machineLimit(root string) Limit {
	b, err := os.ReadFile(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return Limit{From: fmt.Sprintf("unknown: /proc/meminfo could not be read: %v", err)}
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemTotal:" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return Limit{Bytes: kb << 10, From: "the machine's MemTotal"}
			}
		}
	}
	return Limit{From: "unknown: no MemTotal in /proc/meminfo"}
}

// RSS is process pid's resident memory (VmRSS of /proc/PID/status), in
// bytes.
func RSS(root string, pid int) (int64, error) {
	b, err := os.ReadFile(filepath.Join(root, "proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	return parseVmRSS(b)
}

// parseVmRSS is VmRSS in a /proc/PID/status file, in bytes.
func parseVmRSS(b []byte) (int64, error) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("memory: VmRSS %q: %w", f[1], err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("memory: no VmRSS in the status file")
}
