package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// EtcdSegmentBytes is the size of one etcd WAL segment (wal.SegmentSizeBytes).
const EtcdSegmentBytes = 64 * 1000 * 1000

// segment is one preallocated test file.
type segment struct {
	path string
	fd   int
	size int64
	err  error
}

// preallocate creates path and reserves size bytes with fallocate mode 0, so
// the file has its final size and its blocks are allocated (as etcd's
// fileutil.Preallocate with extendFile). Filesystems without fallocate get
// ftruncate, which etcd falls back to as well; the returned note says so.
func preallocate(path string, size int64) (segment, string) {
	s := segment{path: path, size: size, fd: -1}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		s.err = fmt.Errorf("creating test file %s: %w", path, err)
		return s, ""
	}
	s.fd = fd
	note := ""
	err = unix.Fallocate(fd, 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		note = "the filesystem has no fallocate: test files were sized with ftruncate (as etcd does there), so appends may allocate blocks"
		err = unix.Ftruncate(fd, size)
	}
	if err != nil {
		unix.Close(fd)
		os.Remove(path)
		s.fd = -1
		s.err = fmt.Errorf("preallocating %d bytes for %s: %w", size, path, err)
	}
	return s, note
}

// pipeline prepares segments ahead of the writer in a goroutine, like
// etcd's filePipeline, and deletes the ones it is done with.
type pipeline struct {
	dir   string
	sizes func(i int) int64 // size of segment i; 0 means no more segments
	ready chan segment
	done  chan string
	note  string
}

func newPipeline(dir string, sizes func(int) int64) *pipeline {
	return &pipeline{dir: dir, sizes: sizes, ready: make(chan segment, 1), done: make(chan string, 4)}
}

func (p *pipeline) name(i int) string { return filepath.Join(p.dir, fmt.Sprintf("%016x.wal", i)) }

// first prepares segment 0 in the caller's goroutine (before the clock
// starts) and starts preparing the rest in the background.
func (p *pipeline) first() segment {
	s, note := preallocate(p.name(0), p.sizes(0))
	p.note = note
	if s.err == nil {
		go p.run()
	}
	return s
}

// run keeps one segment ready; it removes finished segments before
// allocating, so at most two exist at a time. It ends when sizes says there
// are no more segments or when done is closed.
func (p *pipeline) run() {
	defer close(p.ready)
	for i := 1; ; i++ {
		size := p.sizes(i)
		if size <= 0 {
			return
		}
		s, _ := preallocate(p.name(i), size)
		p.ready <- s
		if s.err != nil {
			return
		}
		old, ok := <-p.done
		if !ok {
			return
		}
		os.Remove(old)
	}
}

// next hands over the next segment after old is finished with.
func (p *pipeline) next(old segment) segment {
	unix.Close(old.fd)
	s, ok := <-p.ready
	p.done <- old.path
	if !ok {
		return segment{fd: -1, err: errors.New("no further segment")}
	}
	return s
}

// close stops the background goroutine and closes a segment it prepared
// but nobody used. The scratch directory removes the files.
func (p *pipeline) close(cur segment) {
	if cur.fd >= 0 {
		unix.Close(cur.fd)
	}
	close(p.done)
	for s := range p.ready {
		if s.fd >= 0 {
			unix.Close(s.fd)
		}
	}
}
