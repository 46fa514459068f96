// Package sysinfo records the environment facts that every etcdbench result
// carries: which filesystem and block device sit behind the directory under
// test, how that device is configured (rotational, I/O scheduler, write
// cache, virtual or not), and the kernel, CPU, memory and hostname of the
// machine.
//
// fsync latency means little without these facts: the same benchmark on
// tmpfs, on an overlay in a container, on a virtio disk with a write-back
// cache and on a bare-metal NVMe drive answers four different questions.
//
// Collection never fails as a whole. A fact that cannot be read is left at
// its zero value and explained in Facts.Notes, so a result from a locked-down
// container still says what it could learn and why the rest is missing.
//
// Every /proc and /sys path is built below a root directory: "/" in
// production, a fixture tree under t.TempDir() in tests. Parsing is kept
// apart from reading: ParseMountInfo, ParseScheduler and the /proc parsers
// are pure functions over bytes and are fuzzed.
package sysinfo
