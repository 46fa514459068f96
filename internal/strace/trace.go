package strace

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"etcdbench/internal/etcdproc"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/scratch"
	"etcdbench/internal/walfile"
)

// TraceWAL traces the WAL and db files of etcd process pid (looked up
// under procRoot) with strace for d and returns the profile as a workload
// and the WAL's directory. Without yes it only says what attaching would
// cost (a usage error); progress, when not nil, is told that it started.
// strace's output goes to a scratch directory that is removed.
func TraceWAL(ctx context.Context, procRoot string, pid int, d time.Duration, yes bool, progress io.Writer) (result.Workload, string, error) {
	files, err := etcdproc.ReadFiles(procRoot, pid)
	if err != nil {
		return result.Workload{}, "", err
	}
	if len(files.WAL) == 0 {
		return result.Workload{}, "", fmt.Errorf("process %d has no WAL segment (*.wal) open: is it an etcd server? Give the right --pid", pid)
	}
	dirs, err := walfile.FindDir(files.WALDir)
	if err != nil {
		dirs = walfile.Dirs{WALDir: files.WALDir, DataDir: files.WALDir}
	}
	tool, err := Find(ctx)
	if err != nil {
		return result.Workload{}, "", err
	}
	if !yes {
		return result.Workload{}, "", run.Usagef("strace stops etcd (process %d) at every system call for %s, which can halve its throughput; add --yes to trace it, or read its WAL offline without slowing it: etcdbench diagnose wal --data-dir %s", pid, d, dirs.DataDir)
	}
	// strace's output goes to a scratch directory of its own in the
	// temporary directory: removed on return (Ctrl-C and SIGTERM cancel
	// ctx), and after a SIGKILL by the next run's or by `etcdbench clean
	// --dir /tmp`, as every scratch directory is (its marker names this
	// process).
	tmp, _, err := scratch.Create(os.TempDir())
	if err != nil {
		return result.Workload{}, "", fmt.Errorf("creating a directory for strace's output: %w", err)
	}
	defer tmp.Remove()
	if progress != nil {
		fmt.Fprintf(progress, "tracing etcd (process %d) with strace %s for %s...\n", pid, tool.Version, d)
	}
	var fds []int
	for fd := range files.WAL {
		fds = append(fds, fd)
	}
	for fd := range files.DB {
		fds = append(fds, fd)
	}
	for fd := range files.Next {
		fds = append(fds, fd) // the next segment after a cut
	}
	out, err := tool.Run(ctx, pid, d, tmp.Path, fds)
	if err != nil {
		return result.Workload{}, "", err
	}
	fh, err := os.Open(out)
	if err != nil {
		return result.Workload{}, "", fmt.Errorf("reading strace's output: %w", err)
	}
	defer fh.Close()
	p, err := ReadProfile(fh, files)
	if err != nil {
		return result.Workload{}, "", err
	}
	wl, err := p.Workload(pid, files, dirs.DataDir, d)
	if err != nil {
		return result.Workload{}, "", err
	}
	wl.Parameters["strace_version"] = tool.Version
	return wl, dirs.WALDir, nil
}
