package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Class is the kind of file a descriptor refers to.
type Class uint32

// The classes traced; 0 is a file not traced.
const (
	ClassNone Class = iota
	ClassWAL        // a WAL segment, member/wal/*.wal (and its .tmp while it is prepared)
	ClassDB         // the bbolt backend, member/snap/db
	ClassSnap       // a raft snapshot, member/snap/*.snap or *.snap.db
)

// Classes lists the traced classes in report order.
var Classes = []Class{ClassWAL, ClassDB, ClassSnap}

// String names the class in figures and latencies: "wal", "db", "snap".
func (c Class) String() string {
	switch c {
	case ClassWAL:
		return "wal"
	case ClassDB:
		return "db"
	case ClassSnap:
		return "snap"
	}
	return "other"
}

// Classify says which class the file at path is, from etcd's data-dir
// layout: member/wal/<seq>-<index>.wal (preallocated as <n>.tmp in the
// same directory), member/snap/db, member/snap/<term>-<index>.snap and
// <index>.snap.db. Everything else (sockets, logs, /dev/...) is ClassNone.
func Classify(path string) Class {
	dir, base := filepath.Base(filepath.Dir(path)), filepath.Base(path)
	switch {
	case dir == "wal" && (strings.HasSuffix(base, ".wal") || strings.HasSuffix(base, ".tmp")):
		return ClassWAL
	case dir == "snap" && base == "db":
		return ClassDB
	case dir == "snap" && (strings.HasSuffix(base, ".snap") || strings.HasSuffix(base, ".snap.db")):
		return ClassSnap
	}
	return ClassNone
}

// openFile is one descriptor of the traced process that is traced.
type openFile struct {
	Path  string
	Class Class
}

// readFDs lists the traced descriptors of pid from procRoot/<pid>/fd:
// each entry's link target, classified. Descriptors that close while it
// reads are skipped.
func readFDs(procRoot string, pid int) (map[uint32]openFile, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("trace: listing the descriptors of process %d (%s): %w", pid, dir, err)
	}
	out := map[uint32]openFile{}
	for _, e := range ents {
		fd, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if c := Classify(target); c != ClassNone {
			out[uint32(fd)] = openFile{Path: target, Class: c}
		}
	}
	return out, nil
}
