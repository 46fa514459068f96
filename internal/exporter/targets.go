package exporter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"etcdbench/internal/etcdproc"
	"etcdbench/internal/sysinfo"
)

// ErrNotEtcd is returned for a --pid that is not an etcd process.
var ErrNotEtcd = errors.New("not an etcd process")

// Target is one etcd process to trace.
type Target struct {
	PID int
	// StartTicks is the process's start time (/proc/PID/stat): with the
	// PID it tells a process from a later one that reuses its PID.
	StartTicks uint64
	// Member is etcd's --name (ETCD_NAME; etcd's default "default").
	Member string
	// DataDir is etcd's data dir as etcd sees it: from its open bbolt
	// db (member/snap/db) or WAL when it has them open, else its
	// --data-dir (ETCD_DATA_DIR; etcd's default NAME.etcd in its
	// working directory).
	DataDir string
}

// key identifies one process.
type key struct {
	pid   int
	start uint64
}

func (t Target) key() key { return key{t.PID, t.StartTicks} }

// Filter narrows the processes traced: only these PIDs, only these data
// dirs (each empty: any).
type Filter struct {
	PIDs     []int
	DataDirs []string
}

// match reports whether t passes the filter.
func (f Filter) match(t Target) bool {
	if len(f.PIDs) > 0 && !slices.Contains(f.PIDs, t.PID) {
		return false
	}
	if len(f.DataDirs) == 0 {
		return true
	}
	for _, d := range f.DataDirs {
		if filepath.Clean(d) == filepath.Clean(t.DataDir) {
			return true
		}
	}
	return false
}

// Discover lists the etcd processes under procRoot that pass f.
// Processes that end while they are read are left out.
func Discover(procRoot string, f Filter) ([]Target, error) {
	ps, err := etcdproc.Find(procRoot)
	if err != nil {
		return nil, err
	}
	var out []Target
	for _, p := range ps {
		t, err := readTarget(procRoot, p)
		if err != nil {
			continue // gone meanwhile
		}
		if f.match(t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// CheckPID says whether pid is an etcd process under procRoot: ErrNotEtcd
// (with what it is) when it is not, an error naming /proc when it does
// not exist.
func CheckPID(procRoot string, pid int) error {
	ps, err := etcdproc.Find(procRoot)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.PID == pid {
			return nil
		}
	}
	comm, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "comm"))
	if err != nil {
		return fmt.Errorf("%w: process %d does not exist (%v)", ErrNotEtcd, pid, err)
	}
	return fmt.Errorf("%w: process %d is %q", ErrNotEtcd, pid, strings.TrimSpace(string(comm)))
}

// readTarget reads what names process p: its start time, the member name
// and data dir from its command line and environment, and the data dir
// from its open files, which win when etcd read its settings from a
// config file.
func readTarget(procRoot string, p etcdproc.Process) (Target, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(p.PID))
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return Target{}, err
	}
	st, err := sysinfo.ParseProcStat(b)
	if err != nil {
		return Target{}, err
	}
	env, _ := os.ReadFile(filepath.Join(dir, "environ")) // unreadable: the flags and etcd's defaults
	cwd, _ := os.Readlink(filepath.Join(dir, "cwd"))
	t := Target{PID: p.PID, StartTicks: st.StartTicks}
	t.Member, t.DataDir = ParseSettings(p.Cmdline, env, cwd)
	if files, err := etcdproc.ReadFiles(procRoot, p.PID); err == nil {
		if d := dataDirOfFiles(files); d != "" {
			t.DataDir = d
		}
	}
	return t, nil
}

// dataDirOfFiles is the data dir that etcd's open db (DIR/member/snap/db)
// or WAL segments (DIR/member/wal) lie in, or "" when neither is open or
// the WAL is elsewhere (--wal-dir).
func dataDirOfFiles(f etcdproc.Files) string {
	for _, p := range f.DB {
		return filepath.Dir(filepath.Dir(filepath.Dir(p)))
	}
	if f.WALDir != "" && filepath.Base(f.WALDir) == "wal" && filepath.Base(filepath.Dir(f.WALDir)) == "member" {
		return filepath.Dir(filepath.Dir(f.WALDir))
	}
	return ""
}

// ParseSettings returns etcd's member name and data dir from its command
// line (--name, --data-dir, as --flag value or --flag=value, with one
// dash or two, as Go's flag package takes them), else from its
// environment (ETCD_NAME, ETCD_DATA_DIR; environ is /proc/PID/environ),
// else etcd's defaults: "default" and NAME.etcd. A relative data dir is
// made absolute with etcd's working directory cwd.
func ParseSettings(cmdline []string, environ []byte, cwd string) (member, dataDir string) {
	set := etcdproc.ParseSettings(cmdline, environ)
	pick := func(flag, def string) string {
		if v := set.Get(flag); v != "" {
			return v
		}
		return def
	}
	member = pick("name", "default")
	dataDir = pick("data-dir", member+".etcd")
	if !filepath.IsAbs(dataDir) && cwd != "" {
		dataDir = filepath.Join(cwd, dataDir)
	}
	return member, filepath.Clean(dataDir)
}
