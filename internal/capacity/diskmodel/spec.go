package diskmodel

import "etcdbench/internal/disk"

// Spec is the capacity sweep as a disk workload: `etcdbench disk
// capacity`, check's budgets' "capacity" and the disk side of
// `etcdbench capacity`.
func Spec() disk.Spec { return capacitySpec }

// Specs are the disk workloads etcdbench offers, in the order `disk all`
// runs them: disk's I/O patterns (disk.Specs) and then the capacity
// sweep, which lives here because it drives etcd's own backend. The
// command line and check's budgets find workloads here, so the list is
// composed once.
func Specs() []disk.Spec { return append(disk.Specs(), Spec()) }

// Lookup returns the workload named name among Specs.
func Lookup(name string) (disk.Spec, bool) {
	for _, s := range Specs() {
		if s.Name == name {
			return s, true
		}
	}
	return disk.Spec{}, false
}
