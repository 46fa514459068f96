package etcdproc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Process is a running etcd found under /proc.
type Process struct {
	PID     int
	Cmdline []string
}

// Find lists the processes under procRoot (normally /proc) whose
// command name (comm) is etcd or whose program is a file named etcd.
// Processes that end while they are read are skipped.
func Find(procRoot string) ([]Process, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	self := os.Getpid()
	var out []Process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(procRoot, e.Name(), "comm"))
		cmd, _ := os.ReadFile(filepath.Join(procRoot, e.Name(), "cmdline"))
		if args, ok := isEtcd(comm, cmd); ok {
			out = append(out, Process{PID: pid, Cmdline: args})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

// isEtcd decides from a process's comm and cmdline files whether it is an
// etcd server (not etcdctl, etcdutl or a program with etcd in its name).
func isEtcd(comm, cmdline []byte) ([]string, bool) {
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(args) == 1 && args[0] == "" {
		args = nil // a kernel thread or a zombie
	}
	if len(args) == 0 {
		return nil, false
	}
	return args, strings.TrimSpace(string(comm)) == "etcd" || filepath.Base(args[0]) == "etcd"
}

// Files are the files an etcd process has open that matter to its
// disk: WAL segments and the bbolt database, by descriptor.
type Files struct {
	WAL map[int]string // descriptor -> segment path (*.wal)
	DB  map[int]string // descriptor -> member/snap/db
	// Next holds the preallocated next segment (N.tmp in the WAL
	// directory): at a cut etcd renames it to the new segment and goes on
	// writing through the same descriptor.
	Next map[int]string
	// Snap holds raft snapshot files being written or read
	// (member/snap/*.snap, *.snap.db).
	Snap map[int]string
	// Other holds the process's other files: any path outside /proc, /sys
	// and /dev that is none of the above (directories too - etcd fsyncs
	// its WAL directory after a segment is created or renamed - and a log
	// file its output is redirected to). Sockets and pipes are not files.
	Other map[int]string
	// WALDir is the directory of the open segments (etcd keeps the last
	// one open, plus the preallocated *.tmp and the directory itself).
	WALDir string
}

// ReadFiles reads the descriptors of process pid from procRoot/PID/fd
// with readlink (no lsof needed; root, or the same user, is needed).
func ReadFiles(procRoot string, pid int) (Files, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return Files{}, fmt.Errorf("reading %s: %w (run as root or as etcd's user)", dir, err)
		}
		return Files{}, fmt.Errorf("reading %s: %w (is process %d running?)", dir, err, pid)
	}
	links := make(map[int]string)
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		switch {
		case err == nil:
			links[fd] = target
		case errors.Is(err, os.ErrPermission):
			// The directory lists, its links do not: the kernel's ptrace
			// check refuses a reader whose capabilities are not a superset
			// of the process's. Seeing none of its files is not the same
			// as it having none.
			return Files{}, fmt.Errorf("reading %s: %w (the kernel's ptrace access check refused it: reading another process's descriptors needs CAP_SYS_PTRACE, or its user and every capability it has)", filepath.Join(dir, e.Name()), err)
		}
	}
	return classifyFiles(links), nil
}

// classifyFiles sorts descriptor targets into WAL segments and the db.
func classifyFiles(links map[int]string) Files {
	f := Files{WAL: map[int]string{}, DB: map[int]string{}, Next: map[int]string{}, Snap: map[int]string{}, Other: map[int]string{}}
	for fd, p := range links {
		switch {
		case IsWALPath(p):
			f.WAL[fd] = p
			if f.WALDir == "" || filepath.Dir(p) > f.WALDir {
				f.WALDir = filepath.Dir(p)
			}
		case IsDBPath(p):
			f.DB[fd] = p
		case isSnapPath(p):
			f.Snap[fd] = p
		}
	}
	for fd, p := range links {
		switch {
		case f.WAL[fd] != "" || f.DB[fd] != "" || f.Snap[fd] != "":
		case f.WALDir != "" && strings.HasSuffix(p, ".tmp") && filepath.Dir(p) == f.WALDir:
			f.Next[fd] = p
		case isOtherFile(p):
			f.Other[fd] = p
		}
	}
	return f
}

// isOtherFile reports whether a descriptor's target is a file of the
// filesystem (not a socket, a pipe or an anonymous inode, whose targets
// are not paths) outside the kernel's /proc, /sys and /dev.
func isOtherFile(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, k := range []string{"/proc", "/sys", "/dev"} {
		if p == k || strings.HasPrefix(p, k+"/") {
			return false
		}
	}
	return true
}

// IsWALPath reports whether a path is a WAL segment (not a deleted one).
func IsWALPath(p string) bool {
	return strings.HasSuffix(p, ".wal")
}

// isSnapPath reports whether a path is a raft snapshot in member/snap.
func isSnapPath(p string) bool {
	return filepath.Base(filepath.Dir(p)) == "snap" && (strings.HasSuffix(p, ".snap") || strings.HasSuffix(p, ".snap.db"))
}

// IsDBPath reports whether a path is etcd's bbolt database.
func IsDBPath(p string) bool {
	return strings.HasSuffix(p, "/snap/db")
}
