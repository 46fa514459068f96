package diagnose

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrWALNotFound is returned when a directory holds no etcd WAL.
var ErrWALNotFound = errors.New("diagnose: no etcd WAL found")

// WALDirs are the directories of one etcd member found from what the user
// gave: its data dir (where 'etcdbench disk wal' should test), and the WAL
// directory holding the segments.
type WALDirs struct {
	DataDir string // etcd's --data-dir
	WALDir  string // the directory of the *.wal segments
}

// FindWALDir accepts etcd's data dir (holding member/wal), the member dir
// (holding wal) or the WAL directory itself, and returns both directories.
// A WAL directory moved out with --wal-dir is accepted as given; its data
// dir is then the WAL directory's parent.
func FindWALDir(dir string) (WALDirs, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return WALDirs{}, fmt.Errorf("diagnose: %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return WALDirs{}, fmt.Errorf("diagnose: %w", err)
	} else if !fi.IsDir() {
		return WALDirs{}, fmt.Errorf("diagnose: %s is not a directory; give etcd's data dir, its member dir or its wal dir", dir)
	}
	for _, c := range []struct{ wal, data string }{
		{abs, filepath.Dir(filepath.Dir(abs))},         // the wal dir itself
		{filepath.Join(abs, "wal"), filepath.Dir(abs)}, // the member dir
		{filepath.Join(abs, "member", "wal"), abs},     // the data dir
	} {
		if segs, _ := walSegmentNames(c.wal); len(segs) > 0 {
			d := WALDirs{DataDir: c.data, WALDir: c.wal}
			if c.wal == abs && filepath.Base(filepath.Dir(abs)) != "member" {
				d.DataDir = filepath.Dir(abs) // a --wal-dir outside the data dir
			}
			return d, nil
		}
	}
	return WALDirs{}, fmt.Errorf("%w in %s (no *.wal files there, nor in member/wal or wal under it); give etcd's --data-dir, its member dir or its wal dir", ErrWALNotFound, dir)
}

// walSegmentNames lists the segment files of a WAL directory, oldest first
// (their names, %016x-%016x.wal, sort in order). The preallocated next
// segment (*.tmp) is not one.
func walSegmentNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".wal") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// WALProfileDir decodes every segment of the WAL directory dir, read-only:
// files are opened for reading only, never locked, and nothing is written.
// Segments are read one at a time, so memory stays at one segment (64 MB).
func WALProfileDir(dir string) (*WALProfile, error) {
	names, err := walSegmentNames(dir)
	if err != nil {
		return nil, fmt.Errorf("diagnose: reading the WAL directory: %w", err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrWALNotFound, dir)
	}
	p := &WALProfile{}
	for _, n := range names {
		// os.ReadFile opens read-only and takes no lock
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // purged by etcd while we read the others
			}
			return nil, fmt.Errorf("diagnose: reading WAL segment: %w", err)
		}
		p.AddSegment(n, b)
	}
	return p, nil
}
