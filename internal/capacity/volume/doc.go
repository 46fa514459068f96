// Package volume says what a volume must give for a capacity: from the
// device's counters around each step of the disk's capacity sweep (a
// Probe, net of the other writers measured idle before and after it),
// each mark's and cluster size's budget in write IOPS, bytes and flushes
// per second (Budgets), the cap a volume puts on the device's writes
// when it bends the curve, and the burst a volume's credits gave before
// it (Burst).
package volume
