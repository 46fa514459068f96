package trace

import (
	"fmt"

	"etcdbench/internal/etcdproc"
)

// Class is the kind of file a descriptor refers to.
type Class uint32

// The classes traced; 0 is a file not traced.
const (
	ClassNone Class = iota
	ClassWAL        // a WAL segment, member/wal/*.wal (and its .tmp while it is prepared)
	ClassDB         // the bbolt backend, member/snap/db
	ClassSnap       // a raft snapshot, member/snap/*.snap or *.snap.db
	// ClassOther is any other file outside /proc, /sys and /dev: a
	// directory etcd fsyncs after creating or renaming a file in it (the
	// WAL's at a segment cut), a log file, a defragmentation's temporary
	// db.
	ClassOther
)

// Classes lists the traced classes in report order.
var Classes = []Class{ClassWAL, ClassDB, ClassSnap, ClassOther}

// String names the class in figures and latencies: "wal", "db", "snap".
func (c Class) String() string {
	switch c {
	case ClassWAL:
		return "wal"
	case ClassDB:
		return "db"
	case ClassSnap:
		return "snap"
	case ClassOther:
		return "other"
	}
	return "none"
}

// openFile is one descriptor of the traced process that is traced.
type openFile struct {
	Path  string
	Class Class
}

// readFDs lists the traced descriptors of pid from procRoot/<pid>/fd, as
// etcdproc.ReadFiles finds and classifies them: the WAL segments and
// the preallocated next one, the bbolt db, snapshot files, other files.
// bpf/trace.c's classify sorts the files opened later the same way.
func readFDs(procRoot string, pid int) (map[uint32]openFile, error) {
	files, err := etcdproc.ReadFiles(procRoot, pid)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	out := map[uint32]openFile{}
	for _, m := range []struct {
		fds   map[int]string
		class Class
	}{{files.WAL, ClassWAL}, {files.Next, ClassWAL}, {files.DB, ClassDB}, {files.Snap, ClassSnap}, {files.Other, ClassOther}} {
		for fd, p := range m.fds {
			if fd >= 0 {
				out[uint32(fd)] = openFile{Path: p, Class: m.class}
			}
		}
	}
	return out, nil
}
