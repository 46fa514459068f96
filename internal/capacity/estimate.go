package capacity

import (
	"fmt"

	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/units"
)

// Estimate combines the disk's sweep d and the etcd side's c (an
// embedded etcd on the same storage, its fsyncs on) into the put rate an
// etcd on both sustains: the lower side. The disk's model costs the
// device what etcd does, but runs alone; the etcd side shares the CPUs
// between its syncs and its work as a real etcd does, so where it gives
// out first, it names why (its limit: the CPUs, the disk, ...). Where
// the etcd side passes a rate the disk's model failed, the etcd's answer
// stands: it is a real etcd on the same storage.
//
// With no disk model (d nil: check --quick runs none) the etcd side's
// answer is the estimate: a real etcd on the storage, whose syncs cost
// the device what the model's would, and which the estimate follows
// whenever it ran below the model's limit, as it does on every storage
// the bench measured but one whose model failed first.
func Estimate(d, c *result.Capacity) *result.CapacityEstimate {
	if d == nil {
		e := &result.CapacityEstimate{Rate: c.Rate, Upper: c.Upper, LimitedBy: c.Bend, CPURate: c.Rate, CPUUpper: c.Upper, WithoutDiskModel: true}
		if e.LimitedBy == "" || (e.LimitedBy == finding.None && c.Upper > 0) {
			e.LimitedBy = finding.CPU
		}
		if c.Upper == 0 {
			e.LimitedBy = finding.None
		}
		e.Evidence = fmt.Sprintf("an etcd on this storage carries %s puts/s, judged by its own WAL fsync and backend commit histograms as a real etcd is; the disk's model did not run (etcdbench capacity runs it, and bounds the answer by it too)", atLeast(c))
		return e
	}
	e := &result.CapacityEstimate{DiskRate: d.Rate, DiskUpper: d.Upper, CPURate: c.Rate, CPUUpper: c.Upper}
	switch {
	case c.Upper > 0 && (d.Upper == 0 || c.Rate < d.Rate):
		e.Rate, e.Upper, e.LimitedBy = c.Rate, c.Upper, c.Bend
		if e.LimitedBy == finding.None || e.LimitedBy == "" {
			e.LimitedBy = finding.CPU
		}
		e.Evidence = fmt.Sprintf("an etcd on this storage carries %s puts/s (it fails etcd's limits at %s/s, limited by %s) while the disk's model alone carries %s writes/s: etcd's syncs and CPU work together, not the disk's I/O alone, set the rate on this machine",
			fmtRate(c.Rate), fmtRate(c.Upper), e.LimitedBy, atLeast(d))
	case d.Upper > 0 && c.Upper == 0 && c.Rate < d.Rate:
		// The etcd side's ladder stopped below the disk's rate without a
		// failure: etcd is shown to carry only that much.
		e.Rate, e.Upper, e.LimitedBy = c.Rate, d.Upper, finding.None
		e.Evidence = fmt.Sprintf("an etcd on this storage carries at least %s puts/s (the etcd side's ladder stopped there, below the disk's %s-%s writes/s): etcd carries at least %s puts/s on this machine and at most the disk's %s; which of the two gives out first between them was not measured",
			fmtRate(c.Rate), fmtRate(d.Rate), fmtRate(d.Upper), fmtRate(c.Rate), fmtRate(d.Upper))
	case d.Upper > 0 && c.Rate > d.Rate:
		// An etcd on this storage, judged by its own metrics as a real
		// etcd is, passed a rate the disk's model failed: the model's
		// syncs, alone and never waiting for etcd's work between them,
		// batch fewer entries than etcd's did, and cost the device more
		// per put; on a machine whose CPUs are taken, its syncs wait for
		// a CPU at light loads too. Under CPUs its neighbours kept busy,
		// on a 2,000-IOPS volume, the model failed 800 writes/s in three
		// rounds (its syncs 1.2 entries each) where the embedded etcd
		// passed 800 (1.4-1.6 a sync) and etcd 3.4 passed 872-1,600
		// (bench/capacity-vs-etcd, busy-iops-2000): the etcd's answer
		// stands, within the model's limit, above which it was not tried.
		e.Rate, e.Upper, e.LimitedBy = c.Rate, c.Upper, c.Bend
		if c.Upper == 0 || e.LimitedBy == "" {
			e.LimitedBy = finding.None
		}
		e.Evidence = fmt.Sprintf("an etcd on this storage carries %s puts/s: it passed a rate at which the disk's model failed (the model carries %s writes/s, %s), judged by its own WAL fsync and backend commit histograms as a real etcd is; it was not tried above the model's limit",
			atLeast(c), atLeast(d), d.Bend)
	case d.Upper > 0:
		e.Rate, e.Upper, e.LimitedBy = d.Rate, d.Upper, finding.Disk
		e.Evidence = fmt.Sprintf("the disk carries %s-%s writes/s (%s) while an etcd on it carries %s puts/s: the disk sets the rate",
			fmtRate(d.Rate), fmtRate(d.Upper), d.Bend, atLeast(c))
	default:
		e.Rate, e.LimitedBy = min(d.Rate, c.Rate), finding.None
		e.Evidence = fmt.Sprintf("neither side failed below the rates tried: the disk carries at least %s writes/s, an etcd on it at least %s puts/s", fmtRate(d.Rate), fmtRate(c.Rate))
	}
	return e
}

// atLeast is a side's answer in words: "at least R" when nothing failed.
func atLeast(c *result.Capacity) string {
	if c.Upper == 0 {
		return "at least " + fmtRate(c.Rate)
	}
	return fmtRate(c.Rate) + "-" + fmtRate(c.Upper)
}

func fmtRate(r float64) string { return units.FormatValue(r, "count") }
