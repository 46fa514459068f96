package disk

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// Env is what every workload gets from its caller.
type Env struct {
	Dir        string // a scratch directory: the only place a workload writes
	Root       string // where /proc and /sys are read, "/" in production
	Facts      sysinfo.Facts
	Thresholds verdict.Thresholds
	OnSecond   func(Progress) // optional: progress once a second
	// Baseline is the idle WAL result of the same run, when one was measured
	// before (disk all); wal-under-load compares with it instead of
	// measuring it again.
	Baseline *result.Workload
}

// Workload is one storage workload, configured and ready to run.
type Workload interface {
	// SpaceNeeded is the most free space the workload needs.
	SpaceNeeded() int64
	// Run runs the workload inside env.Dir and returns what it measured,
	// with verdicts. A cancelled ctx returns a partial result (no verdicts)
	// and ctx's error.
	Run(ctx context.Context, env Env) (result.Workload, error)
}

// Param is a workload setting the command line can change.
type Param struct {
	Name  string // flag name, e.g. "size"
	Usage string
}

// Spec registers a workload: its name, what it does, whether `disk all`
// runs it, which settings it takes, and how to build it.
type Spec struct {
	Name string
	// Description says what the workload measures, in its results.
	Description string
	// Short is its one-line help: a capitalised imperative phrase.
	Short  string
	InAll  bool
	Params []Param
	// Build configures the workload from a preset, overridden by command
	// line values read through s (NewSettings: flag name -> text as
	// typed). Errors wrap ErrBadParam.
	Build func(p Preset, s *Settings) (Workload, error)
}

// ErrBadParam is matched (errors.Is) by every error about a workload
// setting; the error's text is the setting's message alone.
var ErrBadParam = errors.New("bad setting")

// settingError is an error about a setting, in the user's terms: its text
// is the message alone (which names the flag), errors.Is matches its
// sentinel, and it unwraps to the error it was made of.
type settingError struct{ sentinel, err error }

func (e settingError) Error() string        { return e.err.Error() }
func (e settingError) Is(target error) bool { return target == e.sentinel }
func (e settingError) Unwrap() error        { return e.err }

// BadSetting makes a settingError matching sentinel (ErrBadParam or
// ErrBadRate) from format and args, as fmt.Errorf does (%w included).
func BadSetting(sentinel error, format string, args ...any) error {
	return settingError{sentinel, fmt.Errorf(format, args...)}
}

// Specs returns the registered workloads in the order `disk all` runs
// them: the idle WAL first, then what judges commit latency, then the rest
// from the lightest to the heaviest writer.
func Specs() []Spec {
	return []Spec{walSpec, backendSpec, underLoadSpec, mixedSpec, snapshotSpec, compactionSpec, recoverySpec}
}

// Lookup returns the spec named name.
func Lookup(name string) (Spec, bool) {
	for _, s := range Specs() {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Settings applies command-line text to typed fields, keeping the first
// error; only names a spec declares are looked at. Workloads registered
// outside this package (the capacity sweep's) read theirs with it too.
type Settings struct {
	set map[string]string
	err error
	// defaults, when set, records each setting's value before set
	// overrides it: the preset's (Spec.Defaults).
	defaults map[string]string
}

// NewSettings reads set, command-line values by flag name.
func NewSettings(set map[string]string) *Settings { return &Settings{set: set} }

// Defaults are the values a preset gives the spec's settings, by flag
// name, as text for help: what the workload runs with when the command
// line does not set them.
func (sp Spec) Defaults(p Preset) map[string]string {
	s := &Settings{defaults: map[string]string{}}
	if _, err := sp.Build(p, s); err != nil {
		return nil
	}
	return s.defaults
}

// note records name's value before it is read, for Defaults.
func (s *Settings) note(name string, v any) {
	if s.defaults == nil {
		return
	}
	switch v := v.(type) {
	case time.Duration:
		s.defaults[name] = v.String()
	case float64:
		s.defaults[name] = strconv.FormatFloat(v, 'g', -1, 64)
	default:
		s.defaults[name] = fmt.Sprint(v)
	}
}

// Err is the first error of the values read so far; it wraps ErrBadParam.
func (s *Settings) Err() error { return s.err }

// sizeText writes a size as the command line takes it: 64m, 4k, 2300.
func sizeText(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// Has says whether the command line sets name.
func (s *Settings) Has(name string) bool {
	_, ok := s.set[name]
	return ok
}

// Text reads free text, checked by the caller.
func (s *Settings) Text(name string, dst *string) {
	s.note(name, *dst)
	if v, ok := s.set[name]; ok && s.err == nil {
		*dst = v
	}
}

// Size reads a positive size such as 4k.
func (s *Settings) Size(name string, dst *int64) {
	s.note(name, sizeText(*dst))
	if v, ok := s.set[name]; ok && s.err == nil {
		n, err := units.ParseSize(v)
		if err != nil || n <= 0 {
			s.err = BadSetting(ErrBadParam, "--%s %q: want a positive size such as 4k, 1m or 256m", name, v)
			return
		}
		*dst = n
	}
}

// Duration reads a positive duration (0 too with allowZero).
func (s *Settings) Duration(name string, dst *time.Duration, allowZero bool) {
	s.note(name, *dst)
	if v, ok := s.set[name]; ok && s.err == nil {
		d, err := units.ParseDuration(v)
		if err != nil || (d == 0 && !allowZero) {
			s.err = BadSetting(ErrBadParam, "--%s %q: want a positive duration such as 500ms or 10s", name, v)
			return
		}
		*dst = d
	}
}

// Integer reads a whole number from lo to hi.
func (s *Settings) Integer(name string, dst *int, lo, hi int) {
	s.note(name, *dst)
	if v, ok := s.set[name]; ok && s.err == nil {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil || n < lo || n > hi || fmt.Sprint(n) != v {
			s.err = BadSetting(ErrBadParam, "--%s %q: want a whole number from %d to %d", name, v, lo, hi)
			return
		}
		*dst = n
	}
}

// Choice reads one of choices.
func (s *Settings) Choice(name string, dst *string, choices ...string) {
	s.note(name, *dst)
	if v, ok := s.set[name]; ok && s.err == nil {
		for _, c := range choices {
			if v == c {
				*dst = v
				return
			}
		}
		s.err = BadSetting(ErrBadParam, "--%s %q: want one of %v", name, v, choices)
	}
}

// Rate reads an offered rate (ParseRate).
func (s *Settings) Rate(name string, dst *float64) {
	s.note(name, *dst)
	if v, ok := s.set[name]; ok && s.err == nil {
		r, err := ParseRate(v)
		if err != nil {
			s.err = BadSetting(ErrBadParam, "--%s: %w", name, err)
			return
		}
		*dst = r
	}
}

// Fraction reads a number strictly between lo and hi.
func (s *Settings) Fraction(name string, dst *float64, lo, hi float64) {
	s.note(name, *dst)
	if v, ok := s.set[name]; ok && s.err == nil {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > lo && f < hi) {
			s.err = BadSetting(ErrBadParam, "--%s %q: want a number above %v and below %v", name, v, lo, hi)
			return
		}
		*dst = f
	}
}
