package disk

import (
	"strconv"
	"time"

	"etcdbench/internal/stats"
	"etcdbench/internal/units"
)

// WALRequest is a WAL run as `disk wal` is asked for it: the settings as
// typed, and Given naming those the command line gave (a preset's value
// stands for every other one).
type WALRequest struct {
	Preset                               string // quick, default or thorough
	BlockSize, Size, Runtime, MinRuntime string
	Rate                                 string // open loop: entries per second
	EntryBytes                           int
	Count, MinSamples                    int64
	TimeBased                            bool
	P99                                  time.Duration // the stop rule's threshold
	Confidence                           float64
	Given                                func(setting string) bool
}

// WALEntryBytes is an open-loop WAL entry's default size: about what
// etcd writes for an 8-byte key and a 256-byte value.
const WALEntryBytes = 370

// WALDefaults is the request of preset's WAL run as typed by nobody.
func WALDefaults(preset string) WALRequest {
	var w WALParams
	if p, err := PresetNamed(preset); err == nil {
		w = p.WAL
	}
	return WALRequest{
		Preset: preset, BlockSize: strconv.Itoa(w.BlockSize), EntryBytes: WALEntryBytes,
		Runtime: w.Runtime.String(), MinRuntime: w.MinRuntime.String(), MinSamples: w.MinSamples,
	}
}

// Config validates r into the run's configuration: the preset's values
// for what r does not give, one stopping mode (adaptive unless a size, a
// count or a fixed time is given), and an open loop with a rate. Errors
// wrap ErrBadParam and name the setting.
func (r WALRequest) Config() (WALConfig, error) {
	given := r.Given
	if given == nil {
		given = func(string) bool { return false }
	}
	def := WALDefaults(r.Preset)
	if !given("runtime") {
		r.Runtime = def.Runtime
	}
	if !given("min-runtime") {
		r.MinRuntime = def.MinRuntime
	}
	if !given("min-samples") {
		r.MinSamples = def.MinSamples
	}
	bad := func(format string, args ...any) (WALConfig, error) {
		return WALConfig{}, BadSetting(ErrBadParam, format, args...)
	}
	bs, err := units.ParseSize(r.BlockSize)
	if err != nil {
		return bad("--bs: %v", err)
	}
	if bs <= 0 || bs > 64<<20 {
		return bad("--bs must be between 1 byte and 64m, got %q", r.BlockSize)
	}
	rt, err := units.ParseDuration(r.Runtime)
	if err != nil {
		return bad("--runtime: %v", err)
	}
	minRT, err := units.ParseDuration(r.MinRuntime)
	if err != nil {
		return bad("--min-runtime: %v", err)
	}
	if r.MinSamples < 0 {
		return bad("--min-samples must not be negative, got %d", r.MinSamples)
	}
	cfg := WALConfig{
		BlockSize: int(bs), Runtime: rt, Mode: ModeAdaptive,
		Rule: stats.StopRule{
			Threshold: r.P99, Quantile: 0.99, Confidence: r.Confidence,
			MinSamples: r.MinSamples, MinDuration: minRT, Interval: time.Second,
		},
	}
	if given("rate") {
		rate, err := ParseRate(r.Rate)
		if err != nil {
			return bad("--rate: %v", err)
		}
		if given("bs") || given("size") || given("count") {
			return bad("--rate writes whatever entries are waiting, so --bs, --size and --count do not apply: give the entry size with --entry-bytes")
		}
		if r.EntryBytes <= 0 || r.EntryBytes > 1<<20 {
			return bad("--entry-bytes must be between 1 and 1048576, got %d", r.EntryBytes)
		}
		cfg.Rate, cfg.BlockSize = rate, r.EntryBytes
	} else if given("entry-bytes") {
		return bad("--entry-bytes goes with --rate")
	}
	modes := 0
	if given("size") {
		modes++
		size, err := units.ParseSize(r.Size)
		if err != nil {
			return bad("--size: %v", err)
		}
		if size < bs {
			return bad("--bs %s is larger than --size %s", r.BlockSize, r.Size)
		}
		cfg.Mode, cfg.Size = ModeSize, size
	}
	if given("count") {
		modes++
		if r.Count <= 0 {
			return bad("--count must be positive, got %d", r.Count)
		}
		cfg.Mode, cfg.Count = ModeCount, r.Count
	}
	if r.TimeBased {
		modes++
		cfg.Mode = ModeTime
	}
	if modes > 1 {
		return bad("--size, --count and --time-based are alternatives: give at most one")
	}
	if cfg.Mode != ModeAdaptive && !given("runtime") {
		cfg.Runtime = 0 // fixed amounts run to completion unless capped explicitly
		if cfg.Mode == ModeTime {
			cfg.Runtime = rt
		}
	}
	if (cfg.Mode == ModeAdaptive || cfg.Mode == ModeTime) && cfg.Runtime <= 0 {
		return bad("--runtime must be positive in %s mode", cfg.Mode)
	}
	if err := cfg.Validate(); err != nil {
		return bad("%v", err)
	}
	return cfg, nil
}
