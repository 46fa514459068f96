package disk

import (
	"time"
)

// Preset holds every workload's defaults for one time budget. Presets are
// data: `disk all` and each `disk <workload>` start from one and the
// command line overrides single settings. The capacity sweep's settings
// for each preset are diskmodel's, by the preset's name.
type Preset struct {
	Name       string
	Budget     string // what `disk all` takes with it, for help texts
	WAL        WALParams
	Backend    BackendParams
	UnderLoad  UnderLoadParams
	Mixed      MixedParams
	Snapshot   SeqParams
	Compaction SeqParams
	Recovery   RecoveryParams
}

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// Presets returns the presets: quick (about 20 s for `disk all`), default
// (about a minute) and thorough (minutes, with the seed articles' sizes:
// 20 jobs x depth 8 for mixed I/O, 1 GiB snapshots).
func Presets() []Preset {
	return []Preset{
		{
			Name: "quick", Budget: "about 20 s",
			WAL:        WALParams{BlockSize: 2300, MinRuntime: 3 * time.Second, MinSamples: 500, Runtime: 20 * time.Second},
			Backend:    BackendParams{Pages: 16, DBSize: 32 * mib, MinRuntime: 2 * time.Second, MinSamples: 300, Runtime: 10 * time.Second},
			UnderLoad:  UnderLoadParams{Background: "backend", BackendInterval: 100 * time.Millisecond, Clients: 16, EntryBytes: 370},
			Mixed:      MixedParams{BlockSize: 4 * kib, Size: 64 * mib, Runtime: 3 * time.Second, NumJobs: 2, IODepth: 8, ReadMix: 80, Engine: "auto"},
			Snapshot:   SeqParams{BlockSize: 1 * mib, Size: 64 * mib, Runtime: 30 * time.Second},
			Compaction: SeqParams{BlockSize: 64 * kib, Size: 32 * mib, SyncEvery: 4 * mib, Runtime: 30 * time.Second},
			Recovery:   RecoveryParams{BlockSize: 1 * mib, Size: 64 * mib, RandomRuntime: 1 * time.Second, Runtime: 30 * time.Second},
		},
		{
			Name: "default", Budget: "about a minute",
			WAL:        WALParams{BlockSize: 2300, MinRuntime: 10 * time.Second, MinSamples: 1000, Runtime: 60 * time.Second},
			Backend:    BackendParams{Pages: 16, DBSize: 64 * mib, MinRuntime: 5 * time.Second, MinSamples: 500, Runtime: 30 * time.Second},
			UnderLoad:  UnderLoadParams{Background: "backend", BackendInterval: 100 * time.Millisecond, Clients: 16, EntryBytes: 370},
			Mixed:      MixedParams{BlockSize: 4 * kib, Size: 256 * mib, Runtime: 10 * time.Second, NumJobs: 4, IODepth: 8, ReadMix: 80, Engine: "auto"},
			Snapshot:   SeqParams{BlockSize: 1 * mib, Size: 256 * mib, Runtime: 60 * time.Second},
			Compaction: SeqParams{BlockSize: 64 * kib, Size: 128 * mib, SyncEvery: 4 * mib, Runtime: 60 * time.Second},
			Recovery:   RecoveryParams{BlockSize: 1 * mib, Size: 256 * mib, RandomRuntime: 3 * time.Second, Runtime: 60 * time.Second},
		},
		{
			Name: "thorough", Budget: "several minutes",
			WAL:        WALParams{BlockSize: 2300, MinRuntime: 30 * time.Second, MinSamples: 10000, Runtime: 5 * time.Minute},
			Backend:    BackendParams{Pages: 16, DBSize: 256 * mib, MinRuntime: 30 * time.Second, MinSamples: 1000, Runtime: 2 * time.Minute},
			UnderLoad:  UnderLoadParams{Background: "backend,snapshot", BackendInterval: 100 * time.Millisecond, Clients: 16, EntryBytes: 370},
			Mixed:      MixedParams{BlockSize: 4 * kib, Size: 1 * gib, Runtime: 60 * time.Second, NumJobs: 20, IODepth: 8, ReadMix: 80, Engine: "auto"},
			Snapshot:   SeqParams{BlockSize: 1 * mib, Size: 1 * gib, Runtime: 5 * time.Minute},
			Compaction: SeqParams{BlockSize: 64 * kib, Size: 512 * mib, SyncEvery: 4 * mib, Runtime: 5 * time.Minute},
			Recovery:   RecoveryParams{BlockSize: 1 * mib, Size: 1 * gib, RandomRuntime: 10 * time.Second, Runtime: 5 * time.Minute},
		},
	}
}

// PresetNamed returns the preset called name.
func PresetNamed(name string) (Preset, error) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, BadSetting(ErrBadParam, "unknown preset %q (quick, default, thorough)", name)
}
