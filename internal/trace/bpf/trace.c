// SPDX-License-Identifier: (MIT OR GPL-2.0)
//
// etcdbench trace: the write, pwrite64, fdatasync and fsync calls of one
// process on its files (its WAL segments, its bbolt db, its snapshot
// files, any other file), each as one ring-buffer event: syncs with their
// latency in nanoseconds (timed from entry to exit), writes with their
// size when they are made (at entry only). A file the process opens while
// traced is classified here, from the path given to openat, and marked at
// once: etcd writes, syncs and closes a snapshot file within milliseconds,
// too fast for user space to find it in /proc/PID/fd. User space marks
// the files already open when the trace starts.
//
// Every program runs for every process's calls (the tracepoints are
// global), so the common path - another process, or a descriptor not
// marked - is one helper call and a compare, or a map lookup; and writes,
// the frequent call (etcd's sockets too), need no exit program at all:
// their size is known at entry, and their time is not what etcd waits on.
//
// Only syscall tracepoints are used (kprobes are not available on every
// machine etcdbench runs on). The tracepoints' argument layout is the
// kernel's stable format (/sys/kernel/tracing/events/syscalls/*/format):
// 8 bytes of common fields, the syscall number, then one 8-byte slot per
// argument from offset 16; an exit event has the return value at 16.
//
// Build: go generate ./internal/trace (needs clang and libbpf-dev; the
// generated objects are committed, so go build does not).

//go:build ignore

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct sys_enter_args {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 args[6];
};

struct sys_exit_args {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

// The calls traced, as event.kind.
enum call {
	CALL_WRITE = 1,
	CALL_PWRITE = 2,
	CALL_FDATASYNC = 3,
	CALL_FSYNC = 4,
	CALL_OPEN = 5, // an openat that returned a marked descriptor; carries the path
};

// The file classes (Class in files.go).
enum class {
	CLASS_WAL = 1,
	CLASS_DB = 2,
	CLASS_SNAP = 3,
	CLASS_OTHER = 4,
};

// target_tgid is the process traced; set by user space before loading.
volatile const __u32 target_tgid = 0;

// fds holds the descriptors user space wants: fd -> its file class. A
// close removes the fd, so a number reused for a socket is not traced
// until user space marks it again.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} fds SEC(".maps");

// A call between its enter and its exit, per thread. wait_from is when
// the thread last became runnable without a CPU (woken, or preempted),
// 0 while it runs or sleeps; runq sums those waits (see the sched
// programs below).
struct inflight {
	__u64 start;
	__u64 count;
	__u64 wait_from;
	__u64 runq;
	__u32 fd;
	__u32 kind;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct inflight);
} inflight SEC(".maps");

// One completed call.
struct event {
	__u64 end;     // bpf_ktime_get_ns at the exit
	__u64 latency; // exit - enter, ns
	__s64 ret;     // the return value: bytes written, or 0 / -errno
	__u64 count;   // bytes written (write, pwrite64: the size asked for)
	__u32 tid;
	__u32 fd;
	__u32 kind;
	__u32 class;
	__u64 runq;    // ns of the latency the thread spent runnable, waiting for a CPU
};

// Keeps struct event in the BTF, for bpf2go's Go type.
const struct event *unused_event __attribute__((unused));

// PATH_BYTES is the room for an opened file's path; a longer one is cut
// (and classified by what fits, its start).
#define PATH_BYTES 256

// An open event: an event (kind CALL_OPEN, fd and ret the new descriptor,
// class its class) followed by the path as given to openat.
struct open_event {
	struct event e;
	char path[PATH_BYTES];
};

// opening holds, per thread, the path argument of an openat in progress.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} opening SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

// wakeup_bytes is how full the ring buffer may get before a submit wakes
// the reader: below it, user space is not woken per event (thousands of
// wake-ups a second under load) but reads in batches when its poll
// deadline passes (see tracer.go).
#define WAKEUP_BYTES (1 << 20)

static __always_inline void submit(void *e)
{
	__u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > WAKEUP_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

// lost counts events the ring buffer had no room for.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

// count_lost counts one event the ring buffer had no room for.
static __always_inline void count_lost(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero);
	if (n)
		(*n)++;
}

static __always_inline int on_enter(struct sys_enter_args *ctx, __u32 kind, __u64 count)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	__u32 fd = (__u32)ctx->args[0];
	if (!bpf_map_lookup_elem(&fds, &fd))
		return 0;
	__u32 tid = (__u32)id;
	struct inflight in = {
		.start = bpf_ktime_get_ns(),
		.count = count,
		.fd = fd,
		.kind = kind,
	};
	bpf_map_update_elem(&inflight, &tid, &in, BPF_ANY);
	return 0;
}

static __always_inline int on_exit(struct sys_exit_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	__u32 tid = (__u32)id;
	struct inflight *in = bpf_map_lookup_elem(&inflight, &tid);
	if (!in)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		bpf_map_delete_elem(&inflight, &tid);
		return 0;
	}
	__u32 *class = bpf_map_lookup_elem(&fds, &in->fd);
	e->end = now;
	e->latency = now - in->start;
	e->runq = in->runq;
	e->ret = ctx->ret;
	e->count = in->count;
	e->tid = tid;
	e->fd = in->fd;
	e->kind = in->kind;
	e->class = class ? *class : 0;
	submit(e);
	bpf_map_delete_elem(&inflight, &tid);
	return 0;
}

// on_write sends a write's event at its entry: its size, no latency.
static __always_inline int on_write(struct sys_enter_args *ctx, __u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	__u32 fd = (__u32)ctx->args[0];
	__u32 *class = bpf_map_lookup_elem(&fds, &fd);
	if (!class)
		return 0;
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return 0;
	}
	e->end = bpf_ktime_get_ns();
	e->latency = 0;
	e->ret = (__s64)ctx->args[2];
	e->count = ctx->args[2];
	e->tid = (__u32)id;
	e->fd = fd;
	e->kind = kind;
	e->class = *class;
	e->runq = 0;
	submit(e);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_write")
int enter_write(struct sys_enter_args *ctx) { return on_write(ctx, CALL_WRITE); }

SEC("tracepoint/syscalls/sys_enter_pwrite64")
int enter_pwrite64(struct sys_enter_args *ctx) { return on_write(ctx, CALL_PWRITE); }

SEC("tracepoint/syscalls/sys_enter_fdatasync")
int enter_fdatasync(struct sys_enter_args *ctx) { return on_enter(ctx, CALL_FDATASYNC, 0); }

SEC("tracepoint/syscalls/sys_exit_fdatasync")
int exit_fdatasync(struct sys_exit_args *ctx) { return on_exit(ctx); }

SEC("tracepoint/syscalls/sys_enter_fsync")
int enter_fsync(struct sys_enter_args *ctx) { return on_enter(ctx, CALL_FSYNC, 0); }

SEC("tracepoint/syscalls/sys_exit_fsync")
int exit_fsync(struct sys_exit_args *ctx) { return on_exit(ctx); }

// has_suffix reports whether the n-byte string p ends with the sl-byte
// string suf (sl a constant: the loop unrolls).
static __always_inline int has_suffix(const char *p, __u32 n, const char *suf, __u32 sl)
{
	if (n < sl)
		return 0;
#pragma unroll
	for (__u32 i = 0; i < sl; i++)
		if (p[(n - sl + i) & (PATH_BYTES - 1)] != suf[i])
			return 0;
	return 1;
}

#define SUFFIX(p, n, lit) has_suffix(p, n, lit, sizeof(lit) - 1)

// classify names the class of a file etcd opens by its path (n bytes):
// the WAL's segments (*.wal) and the next one being prepared (0.tmp or
// 1.tmp), the backend (snap/db), raft snapshots (*.snap, *.snap.db), and
// other files; not /proc, /sys and /dev (0).
static __always_inline __u32 classify(const char *p, __u32 n)
{
	if (n >= 5 && p[0] == '/' && ((p[1] == 'p' && p[2] == 'r' && p[3] == 'o' && p[4] == 'c') ||
				      (p[1] == 's' && p[2] == 'y' && p[3] == 's' && p[4] == '/') ||
				      (p[1] == 'd' && p[2] == 'e' && p[3] == 'v' && p[4] == '/')))
		return 0;
	if (SUFFIX(p, n, ".wal") || SUFFIX(p, n, "/0.tmp") || SUFFIX(p, n, "/1.tmp"))
		return CLASS_WAL;
	if (SUFFIX(p, n, "/snap/db"))
		return CLASS_DB;
	if (SUFFIX(p, n, ".snap") || SUFFIX(p, n, ".snap.db"))
		return CLASS_SNAP;
	return CLASS_OTHER;
}

SEC("tracepoint/syscalls/sys_enter_openat")
int enter_openat(struct sys_enter_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	__u32 tid = (__u32)id;
	__u64 path = ctx->args[1];
	bpf_map_update_elem(&opening, &tid, &path, BPF_ANY);
	return 0;
}

// At the exit the path is read again (the kernel has just copied it, so
// it is in memory), classified, and the new descriptor marked; user space
// learns the path from the event.
SEC("tracepoint/syscalls/sys_exit_openat")
int exit_openat(struct sys_exit_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	__u32 tid = (__u32)id;
	__u64 *path = bpf_map_lookup_elem(&opening, &tid);
	if (!path)
		return 0;
	__u64 uptr = *path;
	bpf_map_delete_elem(&opening, &tid);
	if (ctx->ret < 0)
		return 0;
	__u32 fd = (__u32)ctx->ret;
	struct open_event *o = bpf_ringbuf_reserve(&events, sizeof(*o), 0);
	if (!o) {
		count_lost();
		return 0;
	}
	long n = bpf_probe_read_user_str(o->path, sizeof(o->path), (const void *)uptr);
	__u32 class = 0;
	if (n > 1)
		class = classify(o->path, (__u32)(n - 1));
	if (class == 0) {
		bpf_ringbuf_discard(o, BPF_RB_NO_WAKEUP);
		bpf_map_delete_elem(&fds, &fd);
		return 0;
	}
	bpf_map_update_elem(&fds, &fd, &class, BPF_ANY);
	o->e.end = bpf_ktime_get_ns();
	o->e.latency = 0;
	o->e.ret = ctx->ret;
	o->e.count = 0;
	o->e.tid = tid;
	o->e.fd = fd;
	o->e.kind = CALL_OPEN;
	o->e.class = class;
	o->e.runq = 0;
	submit(o);
	return 0;
}

// A closed descriptor is forgotten at once: its number may come back as a
// socket before user space looks again.
SEC("tracepoint/syscalls/sys_enter_close")
int enter_close(struct sys_enter_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	__u32 fd = (__u32)ctx->args[0];
	bpf_map_delete_elem(&fds, &fd);
	return 0;
}

// The scheduler's tracepoints time how much of a sync the thread spent
// runnable but without a CPU: from its wake-up (the disk answered) or its
// preemption to the switch that runs it again. A wake-up of a thread that
// is still on its CPU (it had not gone to sleep yet) is dropped when it
// does sleep; one still pending at the syscall's exit is not counted (the
// thread runs there, so a real wait ended at a switch). A sync that is slow for
// that reason is slow because the CPUs are busy, not because the disk is.
// Their formats (/sys/kernel/tracing/events/sched/*/format) have been
// stable since Linux 4.14: sched_wakeup has the woken pid at offset 24;
// sched_switch has prev_pid at 24, prev_state at 32 and next_pid at 56.
// Both fire for every task, so each is one map lookup for the others.

struct sched_wakeup_args {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
	__s32 target_cpu;
};

struct sched_switch_args {
	__u64 common;
	char prev_comm[16];
	__s32 prev_pid;
	__s32 prev_prio;
	__s64 prev_state;
	char next_comm[16];
	__s32 next_pid;
	__s32 next_prio;
};

// TASK_STATE_MASK keeps the task state bits of prev_state; the bit above
// them (TASK_REPORT_MAX) marks a preemption. A task switched out in state
// 0 (TASK_RUNNING), preempted or not, stays runnable and waits for a CPU.
#define TASK_STATE_MASK 0xff

SEC("tracepoint/sched/sched_wakeup")
int sched_wakeup(struct sched_wakeup_args *ctx)
{
	__u32 tid = (__u32)ctx->pid;
	struct inflight *in = bpf_map_lookup_elem(&inflight, &tid);
	if (in && !in->wait_from)
		in->wait_from = bpf_ktime_get_ns();
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int sched_switch(struct sched_switch_args *ctx)
{
	__u64 now = 0;
	__u32 prev = (__u32)ctx->prev_pid;
	struct inflight *in = bpf_map_lookup_elem(&inflight, &prev);
	if (in) {
		// Runnable: it waits from now. Asleep: whatever wake-up was seen
		// while it still ran does not count.
		if ((ctx->prev_state & TASK_STATE_MASK) == 0) {
			now = bpf_ktime_get_ns();
			in->wait_from = now;
		} else {
			in->wait_from = 0;
		}
	}
	__u32 next = (__u32)ctx->next_pid;
	in = bpf_map_lookup_elem(&inflight, &next);
	if (in && in->wait_from) {
		if (!now)
			now = bpf_ktime_get_ns();
		in->runq += now - in->wait_from;
		in->wait_from = 0;
	}
	return 0;
}
