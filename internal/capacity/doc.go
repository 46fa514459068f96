// Package capacity answers how much load a storage carries, and is the
// engine of `etcdbench capacity`: the disk's capacity sweep (package
// diskmodel's workload) and then the etcd side, the `etcd capacity` sweep
// (etcdside.CapacityBench) on an embedded etcd on the same storage, its
// fsyncs on, in one session; the lower of the two is the estimate of the
// put rate an etcd on this disk and machine sustains.
//
// Its subpackages are the parts of that answer: sweep (the ladder, the
// bisection, the bend, the marks a capacity is compared with), volume
// (what a volume must give for each mark, the device's counters around
// the steps), diskmodel (the disk's capacity workload: the WAL and etcd's
// own backend at each offered rate) and etcdside (the sweep on a real
// etcd, its evidence and its limit).
package capacity
