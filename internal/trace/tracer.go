package trace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"

	"etcdbench/internal/sysinfo"
)

// Sentinel errors callers act on.
var (
	// ErrPermission: the BPF program could not be loaded or attached for
	// lack of privilege (root, or CAP_BPF with CAP_PERFMON, is needed).
	ErrPermission = errors.New("not allowed to load BPF programs")
	// ErrNoProcess: the process to trace does not exist.
	ErrNoProcess = errors.New("eBPF tracer: no such process")
	// ErrUnsupported: the kernel lacks what the tracer needs (tracefs,
	// the syscall tracepoints, BPF ring buffers).
	ErrUnsupported = errors.New("the kernel cannot run the tracer")
)

// pollInterval is how often the ring buffer is read when the BPF program
// did not wake the reader (it does only when the buffer is filling up).
const pollInterval = 200 * time.Millisecond

// TracingRoot is where tracefs is expected.
const TracingRoot = "/sys/kernel/tracing"

// tracepoints are the tracepoints attached, by program: the syscalls
// traced, and the scheduler's wake-ups and switches that time how long a
// sync waited for a CPU.
var tracepoints = []struct {
	group, name string
	prog        func(*bpfPrograms) *ebpf.Program
}{
	{"syscalls", "sys_enter_write", func(p *bpfPrograms) *ebpf.Program { return p.EnterWrite }},
	{"syscalls", "sys_enter_pwrite64", func(p *bpfPrograms) *ebpf.Program { return p.EnterPwrite64 }},
	{"syscalls", "sys_enter_fdatasync", func(p *bpfPrograms) *ebpf.Program { return p.EnterFdatasync }},
	{"syscalls", "sys_exit_fdatasync", func(p *bpfPrograms) *ebpf.Program { return p.ExitFdatasync }},
	{"syscalls", "sys_enter_fsync", func(p *bpfPrograms) *ebpf.Program { return p.EnterFsync }},
	{"syscalls", "sys_exit_fsync", func(p *bpfPrograms) *ebpf.Program { return p.ExitFsync }},
	{"syscalls", "sys_enter_close", func(p *bpfPrograms) *ebpf.Program { return p.EnterClose }},
	{"syscalls", "sys_enter_openat", func(p *bpfPrograms) *ebpf.Program { return p.EnterOpenat }},
	{"syscalls", "sys_exit_openat", func(p *bpfPrograms) *ebpf.Program { return p.ExitOpenat }},
	{"sched", "sched_wakeup", func(p *bpfPrograms) *ebpf.Program { return p.SchedWakeup }},
	{"sched", "sched_switch", func(p *bpfPrograms) *ebpf.Program { return p.SchedSwitch }},
}

// Options say what to trace and for how long.
type Options struct {
	PID int
	// Duration bounds the trace; it also ends when ctx is done or the
	// process exits.
	Duration time.Duration
	// ExitCheck is how often the process is checked for having exited
	// (default 500 ms). Files it opens are marked in the kernel as they
	// are opened (bpf/trace.c), so /proc/PID/fd is read only at the start.
	ExitCheck time.Duration
	// ProcRoot is /proc unless a test says otherwise.
	ProcRoot string
	// Observer, when set, receives every write and sync as it is read,
	// and the trace keeps no statistics of its own: the returned Trace
	// has its PID, times, Lost and Exited, but no files and an empty
	// Workload. For traces that last as long as the process (exporter).
	Observer Observer
	// Attached, when set, is called once, as Observer.Attached is: the
	// programs are attached and the files open at the start marked, so
	// every write and sync from then on is seen. For callers that start
	// what they trace only then (tests).
	Attached func()
	// flusher, when set, is given the ring buffer's Flush once the
	// programs are attached, and flushed is called each time the events
	// in the buffer at a Flush have all been read (Follower).
	flusher func(flush func() error)
	flushed func()
}

// Trace is what a finished trace saw.
type Trace struct {
	PID     int
	Start   time.Time
	Elapsed time.Duration
	// Files are the traced files seen, by path: every WAL, db and
	// snapshot file open during the trace, and the other files written or
	// synced.
	Files map[string]Class
	// Lost counts events the ring buffer had no room for.
	Lost int64
	// Exited is true when the traced process ended the trace.
	Exited bool
	col    *collector
}

// Run traces opts.PID until the duration is over, ctx is done or the
// process exits, then detaches everything. A cancelled ctx still returns
// what was seen, with ctx's error.
func Run(ctx context.Context, opts Options) (*Trace, error) {
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if opts.ExitCheck <= 0 {
		opts.ExitCheck = 500 * time.Millisecond
	}
	if _, err := os.Stat(filepath.Join(opts.ProcRoot, strconv.Itoa(opts.PID))); err != nil {
		return nil, fmt.Errorf("%w: %d (%v)", ErrNoProcess, opts.PID, err)
	}
	if err := ensureTracefs(); err != nil {
		return nil, err
	}
	t, err := attach(opts.PID)
	if err != nil {
		return nil, err
	}
	defer t.close()
	return t.run(ctx, opts)
}

// ensureTracefs mounts tracefs at TracingRoot when the syscall
// tracepoints are not visible there.
func ensureTracefs() error {
	probe := filepath.Join(TracingRoot, "events", "syscalls", "sys_enter_fdatasync")
	if _, err := os.Stat(probe); err == nil {
		return nil
	}
	if err := unix.Mount("tracefs", TracingRoot, "tracefs", 0, ""); err != nil && !errors.Is(err, unix.EBUSY) {
		if errors.Is(err, unix.EPERM) {
			return fmt.Errorf("%w: mounting tracefs at %s: %v (run as root, or with CAP_SYS_ADMIN once to mount it and CAP_BPF and CAP_PERFMON)", ErrPermission, TracingRoot, err)
		}
		return fmt.Errorf("%w: tracefs is not mounted at %s and mounting it failed: %v", ErrUnsupported, TracingRoot, err)
	}
	if _, err := os.Stat(probe); err != nil {
		return fmt.Errorf("%w: no syscall tracepoints in %s (kernel without CONFIG_FTRACE_SYSCALLS?)", ErrUnsupported, TracingRoot)
	}
	return nil
}

// attached is a loaded and attached tracer.
type attached struct {
	objs  bpfObjects
	links []link.Link
	rd    *ringbuf.Reader
}

// attach loads the BPF objects for pid and attaches every tracepoint.
func attach(pid int) (a *attached, err error) {
	spec, err := loadBpf()
	if err != nil {
		return nil, fmt.Errorf("eBPF tracer: reading the BPF object: %w", err)
	}
	if err := spec.Variables["target_tgid"].Set(uint32(pid)); err != nil {
		return nil, fmt.Errorf("eBPF tracer: setting the traced process: %w", err)
	}
	a = &attached{}
	if err := spec.LoadAndAssign(&a.objs, nil); err != nil {
		return nil, loadError(err)
	}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	for _, tp := range tracepoints {
		l, err := link.Tracepoint(tp.group, tp.name, tp.prog(&a.objs.bpfPrograms), nil)
		if err != nil {
			return nil, loadError(fmt.Errorf("attaching to %s/%s: %w", tp.group, tp.name, err))
		}
		a.links = append(a.links, l)
	}
	if a.rd, err = ringbuf.NewReader(a.objs.Events); err != nil {
		return nil, fmt.Errorf("eBPF tracer: reading the ring buffer: %w", err)
	}
	return a, nil
}

// loadError names a missing privilege as ErrPermission.
func loadError(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return permissionError(err, selfStatus())
	}
	return fmt.Errorf("%w: loading the BPF program: %v", ErrUnsupported, err)
}

// close detaches every tracepoint and frees the maps; safe on a partly
// attached tracer.
func (a *attached) close() {
	if a.rd != nil {
		a.rd.Close()
	}
	for _, l := range a.links {
		l.Close()
	}
	a.objs.Close()
}

// monotonicNow is CLOCK_MONOTONIC in ns, the clock of bpf_ktime_get_ns.
func monotonicNow() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) // cannot fail for this clock
	return uint64(ts.Nano())
}

// run reads events until the end and returns the trace.
func (a *attached) run(ctx context.Context, opts Options) (*Trace, error) {
	tr := &Trace{PID: opts.PID, Start: time.Now(), col: newCollector(monotonicNow())}
	tr.col.observer = opts.Observer
	proc := filepath.Join(opts.ProcRoot, strconv.Itoa(opts.PID))
	if cwd, err := os.Readlink(filepath.Join(proc, "cwd")); err == nil {
		tr.col.cwd = cwd // for the relative paths etcd may open
	}
	if err := a.markOpen(opts, tr.col); err != nil {
		return nil, err
	}
	if opts.flusher != nil {
		opts.flusher(a.rd.Flush)
	}
	if opts.Observer != nil {
		opts.Observer.Attached()
	}
	if opts.Attached != nil {
		opts.Attached()
	}
	var deadline time.Time
	if opts.Duration > 0 {
		deadline = tr.Start.Add(opts.Duration)
	}
	nextCheck := time.Now().Add(opts.ExitCheck)
	var rec ringbuf.Record
	var runErr error
	for {
		now := time.Now()
		if ctx.Err() != nil {
			runErr = ctx.Err()
			break
		}
		if !deadline.IsZero() && !now.Before(deadline) {
			break
		}
		if !now.Before(nextCheck) {
			if opts.Observer != nil {
				opts.Observer.Lost(a.lost())
			}
			if exited(proc) {
				tr.Exited = true
				break
			}
			nextCheck = now.Add(opts.ExitCheck)
		}
		// The BPF program wakes this reader only when the ring buffer
		// fills up; otherwise the events are read here in batches.
		wait := now.Add(pollInterval)
		if nextCheck.Before(wait) {
			wait = nextCheck
		}
		if !deadline.IsZero() && deadline.Before(wait) {
			wait = deadline
		}
		a.rd.SetDeadline(wait)
		err := a.rd.ReadInto(&rec)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			continue
		case errors.Is(err, ringbuf.ErrFlushed):
			if opts.flushed != nil {
				opts.flushed()
			}
			continue
		case err != nil:
			runErr = fmt.Errorf("eBPF tracer: reading events: %w", err)
		}
		if runErr != nil {
			break
		}
		if e, err := decodeEvent(rec.RawSample); err == nil {
			tr.col.add(e)
		}
	}
	tr.drain(a)
	tr.Elapsed = time.Since(tr.Start)
	tr.Lost = a.lost()
	if opts.Observer != nil {
		opts.Observer.Lost(tr.Lost)
	}
	tr.Files = tr.col.used
	return tr, runErr
}

// markOpen marks the files the process has open as the trace begins (the
// BPF programs, attached before, mark those opened from then on). A
// descriptor closed and its number reused between the read of /proc and
// its marking would keep a stale mark, so /proc is read a second time and
// what changed in between is marked again or unmarked.
func (a *attached) markOpen(opts Options, col *collector) error {
	fds, err := readFDs(opts.ProcRoot, opts.PID)
	if err != nil {
		return err
	}
	for fd, f := range fds {
		if err := a.objs.Fds.Put(fd, uint32(f.Class)); err != nil {
			return fmt.Errorf("eBPF tracer: marking descriptor %d: %w", fd, err)
		}
	}
	again, err := readFDs(opts.ProcRoot, opts.PID)
	if err != nil {
		return err
	}
	for fd, f := range fds {
		g, ok := again[fd]
		switch {
		case !ok:
			_ = a.objs.Fds.Delete(fd) // gone already: nothing to unmark
		case g != f:
			if err := a.objs.Fds.Put(fd, uint32(g.Class)); err != nil {
				return fmt.Errorf("eBPF tracer: marking descriptor %d: %w", fd, err)
			}
		}
	}
	for fd, f := range again {
		col.opened(fd, f)
	}
	return nil
}

// exited reports whether the process proc (its /proc directory) has
// ended: it is gone, or a zombie its parent has not reaped yet.
func exited(proc string) bool {
	b, err := os.ReadFile(filepath.Join(proc, "stat"))
	if err != nil {
		return errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH)
	}
	st, err := sysinfo.ParseProcStat(b)
	return err == nil && (st.State == 'Z' || st.State == 'X')
}

// drain takes the events still in the ring buffer.
func (tr *Trace) drain(a *attached) {
	var rec ringbuf.Record
	a.rd.SetDeadline(time.Now())
	for a.rd.ReadInto(&rec) == nil {
		if e, err := decodeEvent(rec.RawSample); err == nil {
			tr.col.add(e)
		}
	}
}

// lost sums the per-CPU count of events the ring buffer dropped.
func (a *attached) lost() int64 {
	var per []uint64
	if err := a.objs.Lost.Lookup(uint32(0), &per); err != nil {
		return 0
	}
	var n int64
	for _, v := range per {
		n += int64(v)
	}
	return n
}

// Dir is the directory of the first traced file of class c (in path
// order), or def when none was seen.
func (tr *Trace) Dir(c Class, def string) string {
	var first string
	for p, pc := range tr.Files {
		if pc == c && (first == "" || p < first) {
			first = p
		}
	}
	if first == "" {
		return def
	}
	return filepath.Dir(first)
}

// Probe loads and attaches the tracer's programs for this process and
// detaches them at once: ErrPermission or ErrUnsupported say, before any
// etcd is there to trace, that the tracer cannot run here.
func Probe() error {
	if err := ensureTracefs(); err != nil {
		return err
	}
	a, err := attach(os.Getpid())
	if err != nil {
		return err
	}
	a.close()
	return nil
}
