package diskmodel

import (
	"time"

	"etcdbench/internal/capacity/sweep"
	"etcdbench/internal/disk"
)

const mib = int64(1) << 20

// presets are the capacity sweep of each of disk's presets
// (disk.Presets), by the preset's name.
func presets() map[string]CapacityParams {
	return map[string]CapacityParams{
		"quick":    capacityPreset(0.2, 1*time.Second, 200, 8*time.Second),
		"default":  capacityPreset(0.1, 2*time.Second, 300, 15*time.Second),
		"thorough": capacityPreset(0.05, 10*time.Second, 1000, time.Minute),
	}
}

// PresetNamed returns the capacity sweep of disk's preset called name.
func PresetNamed(name string) (CapacityParams, error) {
	c, ok := presets()[name]
	if !ok {
		return CapacityParams{}, disk.BadSetting(disk.ErrBadParam, "unknown preset %q (quick, default, thorough)", name)
	}
	return c, nil
}

// capacityPreset is the sweep of one budget: the ladder from 100 to
// MaxRate entries/s doubling, then a bisection to resolution; steps of
// minRuntime..runtime and at least minSamples syncs.
func capacityPreset(resolution float64, minRuntime time.Duration, minSamples int64, runtime time.Duration) CapacityParams {
	return CapacityParams{
		Shape: CheckPerfShape, EntryBytes: CheckPerfShape.WALEntryBytes(), Start: 100, Factor: 2, Min: 10, Max: disk.MaxRate, Resolution: resolution,
		StepMinRuntime: minRuntime, StepMinSamples: minSamples, StepRuntime: runtime, Confidence: 0.95,
		Background: "backend", Marks: sweep.CheckPerfMarks,
	}
}
