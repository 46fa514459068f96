// Package scratch owns the only place etcdbench writes: a private directory
// it creates inside the directory under test, marked as etcdbench's, and
// removes on exit. A directory left behind by a killed run is recognised by
// its marker (the owner process is gone, or the machine rebooted) and removed
// by the next run or by `etcdbench clean`.
package scratch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/sysinfo"
	"etcdbench/internal/units"
)

// Prefix starts the name of every scratch directory; MarkerName is the file
// inside it that says it is etcdbench's.
const (
	Prefix     = ".etcdbench-scratch-"
	MarkerName = ".etcdbench-scratch"
	toolName   = "etcdbench"
)

// Sentinel errors for the conditions callers map to messages and exit codes.
var (
	ErrNotExist   = errors.New("directory does not exist")
	ErrNotDir     = errors.New("not a directory")
	ErrPermission = errors.New("no permission to write")
	ErrReadOnly   = errors.New("read-only filesystem")
	ErrNoSpace    = errors.New("not enough free space")
	ErrNotStorage = errors.New("not storage")
)

// Marker is the content of the marker file.
type Marker struct {
	Tool       string    `json:"tool"`
	PID        int       `json:"pid"`
	StartTicks uint64    `json:"start_ticks"` // the owner's start time, /proc/PID/stat field 22
	BootID     string    `json:"boot_id"`
	Created    time.Time `json:"created"`
}

// Dir is a scratch directory owned by this process.
type Dir struct {
	Path string
}

// Check validates that parent is an existing directory and returns its
// absolute path.
func Check(parent string) (string, error) {
	abs, err := filepath.Abs(parent)
	if err != nil {
		return "", fmt.Errorf("%s: %w", parent, err)
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: %w", parent, ErrNotExist)
	case errors.Is(err, fs.ErrPermission):
		return "", fmt.Errorf("%s: %w (cannot even look at it)", parent, ErrPermission)
	case err != nil:
		return "", fmt.Errorf("%s: %w", parent, err)
	case !st.IsDir():
		return "", fmt.Errorf("%s: %w", parent, ErrNotDir)
	}
	if fsType, ok := fsTypeOf(abs); ok && sysinfo.IsPseudoFS(fsType) {
		return "", fmt.Errorf("%s: %w: it is on %s, a view of the kernel's state; give a directory on the disk to test", parent, ErrNotStorage, fsType)
	}
	return abs, nil
}

// fsTypeOf is the type of the filesystem dir is on, from this process's
// mountinfo; false when it cannot be read. A symbolic link is followed
// first: mountinfo names where things are, not the links to them.
func fsTypeOf(dir string) (string, bool) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", false
	}
	ms, err := sysinfo.ParseMountInfo(data)
	if err != nil {
		return "", false
	}
	m, ok := sysinfo.MountFor(ms, dir)
	return m.FSType, ok
}

// FreeBytes returns the space an unprivileged writer may still use in dir.
func FreeBytes(dir string) (int64, error) {
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		return 0, fmt.Errorf("checking free space of %s: %w", dir, err)
	}
	return int64(s.Bavail) * int64(s.Bsize), nil
}

// CheckFree fails with ErrReadOnly when dir's filesystem is mounted
// read-only (however much space it has: a small one read as short of
// space), and with ErrNoSpace unless dir has need bytes free.
func CheckFree(dir string, need int64) error {
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		return fmt.Errorf("checking free space of %s: %w", dir, err)
	}
	if s.Flags&unix.ST_RDONLY != 0 {
		return fmt.Errorf("%s: %w: give a directory on a filesystem mounted read-write", dir, ErrReadOnly)
	}
	free := int64(s.Bavail) * int64(s.Bsize)
	if free < need {
		return fmt.Errorf("%s: %w: the test needs %s, %s is free", dir, ErrNoSpace, units.FormatBytes(need), units.FormatBytes(free))
	}
	return nil
}

// Create makes a new scratch directory (mode 0700) inside parent and writes
// its marker. Stale scratch directories of killed runs are removed first;
// their paths are returned so the caller can say so.
func Create(parent string) (*Dir, []string, error) {
	abs, err := Check(parent)
	if err != nil {
		return nil, nil, err
	}
	rep, err := Clean(abs)
	if err != nil {
		return nil, nil, err
	}
	removed := rep.Removed
	path, err := os.MkdirTemp(abs, Prefix+"*")
	if err != nil {
		return nil, removed, classify(abs, err)
	}
	d := &Dir{Path: path}
	if err := os.Chmod(path, 0o700); err != nil {
		_ = os.Remove(path)
		return nil, removed, classify(abs, err)
	}
	m, err := selfMarker()
	if err == nil {
		err = writeMarker(filepath.Join(path, MarkerName), m)
	}
	if err != nil {
		_ = os.RemoveAll(path)
		return nil, removed, classify(abs, err)
	}
	return d, removed, nil
}

func writeMarker(path string, m Marker) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// classify turns the errors of creating files into the package's sentinels.
func classify(dir string, err error) error {
	switch {
	case errors.Is(err, unix.EROFS):
		return fmt.Errorf("%s: %w", dir, ErrReadOnly)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: %w", dir, ErrPermission)
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		return fmt.Errorf("%s: %w", dir, ErrNoSpace)
	}
	return fmt.Errorf("creating scratch directory in %s: %w", dir, err)
}

// Remove deletes the scratch directory and everything in it. It refuses a
// path that is not a directory carrying this package's marker, so it can
// never delete anything etcdbench did not create.
func (d *Dir) Remove() error {
	if d == nil || d.Path == "" {
		return nil
	}
	if _, err := readMarker(d.Path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Lstat(d.Path); errors.Is(serr, fs.ErrNotExist) {
				return nil // already gone
			}
		}
		return fmt.Errorf("not removing %s: %w", d.Path, err)
	}
	if err := os.RemoveAll(d.Path); err != nil {
		return fmt.Errorf("removing scratch directory: %w", err)
	}
	d.Path = ""
	return nil
}

// File returns the path of name inside the scratch directory.
func (d *Dir) File(name string) string { return filepath.Join(d.Path, name) }

func readMarker(dir string) (Marker, error) {
	var m Marker
	st, err := os.Lstat(dir)
	if err != nil {
		return m, err
	}
	if !st.IsDir() {
		return m, fmt.Errorf("%s is not a directory", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, MarkerName))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Tool != toolName {
		return m, fmt.Errorf("%s has no valid etcdbench marker", dir)
	}
	return m, nil
}

// CleanReport says what Clean did with each scratch directory it found.
type CleanReport struct {
	Removed    []string // the owner was gone
	InUse      []string // a running etcdbench owns it
	Unreadable []string // its marker could not be read (permissions): left alone
}

// Clean removes the scratch directories in parent whose owner is gone.
// Anything without a valid marker is never touched.
func Clean(parent string) (CleanReport, error) {
	var rep CleanReport
	entries, err := os.ReadDir(parent)
	if err != nil {
		return rep, classify(parent, err)
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), Prefix) {
			continue
		}
		path := filepath.Join(parent, e.Name())
		m, err := readMarker(path)
		switch {
		case errors.Is(err, fs.ErrPermission):
			rep.Unreadable = append(rep.Unreadable, path)
			continue
		case err != nil:
			continue // not provably ours
		case alive(m):
			rep.InUse = append(rep.InUse, path)
			continue
		}
		if err := errors.Join(detachMounts(path), os.RemoveAll(path)); err != nil {
			return rep, fmt.Errorf("removing stale scratch directory: %w", err)
		}
		rep.Removed = append(rep.Removed, path)
	}
	return rep, nil
}
