package walfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNotFound is returned when a directory holds no etcd WAL. It and the
// errors below keep the "diagnose:" prefix they had before this package
// was split out of diagnose: users of 'etcdbench diagnose wal' and --bs
// auto see the same messages.
var ErrNotFound = errors.New("no etcd WAL found")

// Dirs are the directories of one etcd member found from what the user
// gave: its data dir (where 'etcdbench disk wal' should test), and the WAL
// directory holding the segments.
type Dirs struct {
	DataDir string // etcd's --data-dir
	WALDir  string // the directory of the *.wal segments
}

// FindDir accepts etcd's data dir (holding member/wal), the member dir
// (holding wal) or the WAL directory itself, and returns both directories.
// A WAL directory moved out with --wal-dir is accepted as given; its data
// dir is then the WAL directory's parent.
func FindDir(dir string) (Dirs, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Dirs{}, fmt.Errorf("%s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return Dirs{}, fmt.Errorf("%s: %w; give etcd's data dir, its member dir or its wal dir", dir, fs.ErrNotExist)
	} else if err != nil {
		return Dirs{}, fmt.Errorf("%s: %w", dir, errors.Unwrap(err))
	} else if !fi.IsDir() {
		return Dirs{}, fmt.Errorf("%s is not a directory; give etcd's data dir, its member dir or its wal dir", dir)
	}
	for _, c := range []struct{ wal, data string }{
		{abs, filepath.Dir(filepath.Dir(abs))},         // the wal dir itself
		{filepath.Join(abs, "wal"), filepath.Dir(abs)}, // the member dir
		{filepath.Join(abs, "member", "wal"), abs},     // the data dir
	} {
		if segs, _ := segmentNames(c.wal); len(segs) > 0 {
			d := Dirs{DataDir: c.data, WALDir: c.wal}
			if c.wal == abs && filepath.Base(filepath.Dir(abs)) != "member" {
				d.DataDir = filepath.Dir(abs) // a --wal-dir outside the data dir
			}
			return d, nil
		}
	}
	return Dirs{}, fmt.Errorf("%w in %s (no *.wal files there, nor in member/wal or wal under it); give etcd's --data-dir, its member dir or its wal dir", ErrNotFound, dir)
}

// segmentNames lists the segment files of a WAL directory, oldest first
// (their names, %016x-%016x.wal, sort in order). The preallocated next
// segment (*.tmp) is not one.
func segmentNames(dir string) ([]string, error) {
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

// ProfileDir decodes every segment of the WAL directory dir, read-only:
// files are opened for reading only, never locked, and nothing is written.
// Segments are read one at a time, so memory stays at one segment (64 MB).
func ProfileDir(dir string) (*Profile, error) {
	names, err := segmentNames(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the WAL directory: %w", err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNotFound, dir)
	}
	p := &Profile{}
	for _, n := range names {
		// os.ReadFile opens read-only and takes no lock
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // purged by etcd while we read the others
			}
			return nil, fmt.Errorf("reading WAL segment: %w", err)
		}
		p.AddSegment(n, b)
	}
	return p, nil
}
