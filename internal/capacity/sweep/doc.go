// Package sweep finds how much write load a storage (or an etcd
// cluster) carries: a sweep of rising offered rates, each step an
// open-loop run judged by its own p99 verdict, that returns the highest
// rate meeting every limit, the curve of steps and what bends it.
//
// The sweep knows nothing of disks or etcd: a step is a function from an
// offered rate to a result.CapacityStep, so the disk's model (package
// diskmodel) and `etcd capacity` (real puts, package etcdside) share the
// ladder, the bisection, the confidence bookkeeping and the diagnosis of
// the bend.
//
// A sweep climbs a geometric ladder (Start, Start x Factor, ...) until
// the first step fails, or descends it when the first step already
// fails, then bisects (geometrically) between the highest passing and
// the lowest failing rate until they are within Resolution of each
// other. Every step runs as long as its own verdict needs (the stop
// rule of package stats); the sweep's overall confidence is shared
// among its steps (Bonferroni), so "carries X" holds at that confidence
// whatever the number of steps.
package sweep
