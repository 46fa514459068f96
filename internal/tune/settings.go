package tune

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/scratch"
	"etcdbench/internal/units"
)

// ErrBadVary is wrapped by every error about --vary: an unknown name, a
// value that does not parse, a combination etcd refuses. The command line
// turns it into a usage error.
var ErrBadVary = errors.New("bad --vary")

// Config is everything one run is made of: the directory the embedded
// etcd's scratch directory goes into, the embedded etcd's settings and the
// load.
type Config struct {
	Dir      string
	Embedded etcdcluster.Options
	Load     etcdload.Load
}

// Value is one parsed value of a setting.
type Value struct {
	// Text is the value as shown and recorded: canonical, so that "0.1s"
	// and "100ms" are the same value.
	Text string
	n    int64
	d    time.Duration
}

// Setting is one thing --vary can change.
type Setting struct {
	// Name is how --vary names it, the same as the flag of `etcd put`.
	Name string
	// Sets says what it sets, e.g. "etcd's --snapshot-count".
	Sets string
	// Limit says which values are accepted and whose rule that is.
	Limit string
	parse func(string) (Value, error)
	apply func(*Config, Value)
}

// Parse checks one value of the setting.
func (s *Setting) Parse(v string) (Value, error) {
	val, err := s.parse(strings.TrimSpace(v))
	if err != nil {
		return Value{}, fmt.Errorf("%w: %s=%s: %v; %s takes %s", ErrBadVary, s.Name, v, err, s.Name, s.Limit)
	}
	return val, nil
}

// ParseFlag checks a value of the setting given as its own flag
// (--NAME VALUE); errors name the flag and say what it takes.
func (s *Setting) ParseFlag(v string) (Value, error) {
	val, err := s.parse(strings.TrimSpace(v))
	if err != nil {
		return Value{}, fmt.Errorf("--%s %q: %v; it takes %s", s.Name, v, err, s.Limit)
	}
	return val, nil
}

// Apply sets v in c.
func (s *Setting) Apply(c *Config, v Value) { s.apply(c, v) }

// etcd's defaults and limits that the rules need, with their source in
// go.etcd.io/etcd/server/v3 (v3.7.3, the version etcdbench embeds).
var etcdLimits = struct {
	TickMs, ElectionMs, MaxElectionMs int64
	SnapshotCount                     int64
	MaxQuotaBytes                     int64
	Source                            map[string]string
}{
	TickMs: 100, ElectionMs: 1000, MaxElectionMs: 50000,
	SnapshotCount: 10000,
	MaxQuotaBytes: 8 << 30,
	Source: map[string]string{
		"defaults":     "etcd server/embed/config.go NewConfig: TickMs 100, ElectionMs 1000",
		"tick>0":       "etcd server/embed/config.go (*Config).Validate: \"--heartbeat-interval must be >0\"",
		"election>0":   "etcd server/embed/config.go (*Config).Validate: \"--election-timeout must be >0\"",
		"maxElection":  "etcd server/embed/config.go maxElectionMs = 50000, checked in (*Config).Validate",
		"snapshot0":    "etcd server/etcdserver/server.go: a --snapshot-count of 0 is replaced by DefaultSnapshotCount (10000)",
		"maxQuota":     "etcd server/storage/quota.go MaxQuotaBytes (8 GiB): larger quotas are accepted with the warning \"quota exceeds the maximum value\"",
		"batchTicker":  "etcd server/storage/backend/backend.go: the batch interval drives a time.Ticker, which refuses a non-positive period",
		"batchDefault": "etcd server/storage/backend.go: a --backend-batch-limit of 0 keeps the default (10000)",
	},
}

// Settings are the names --vary knows, in the order the help lists them.
var Settings = []*Setting{
	{
		Name: "snapshot-count", Sets: "etcd's --snapshot-count (committed entries between snapshots)",
		Limit: "a whole number of at least 1 (0 means etcd's default, 10000: " + etcdLimits.Source["snapshot0"] + ")",
		parse: intIn(1, 1<<62),
		apply: func(c *Config, v Value) { c.Embedded.SnapshotCount = uint64(v.n) },
	},
	{
		Name: "heartbeat-interval", Sets: "etcd's --heartbeat-interval",
		Limit: "whole milliseconds of at least 1 (a plain number is milliseconds, as for etcd's flag; " + etcdLimits.Source["tick>0"] + ")",
		parse: millis(1, 1<<31),
		apply: func(c *Config, v Value) { c.Embedded.HeartbeatInterval = v.d },
	},
	{
		Name: "election-timeout", Sets: "etcd's --election-timeout",
		Limit: "whole milliseconds from 1 to 50000 (a plain number is milliseconds, as for etcd's flag; " + etcdLimits.Source["maxElection"] + ")",
		parse: millis(1, etcdLimits.MaxElectionMs),
		apply: func(c *Config, v Value) { c.Embedded.ElectionTimeout = v.d },
	},
	{
		Name: "quota-backend-bytes", Sets: "etcd's --quota-backend-bytes",
		Limit: "a size of at least 1 byte such as 2g (over 8 GiB etcd only warns; " + etcdLimits.Source["maxQuota"] + ")",
		parse: size(1),
		apply: func(c *Config, v Value) { c.Embedded.QuotaBackendBytes = v.n },
	},
	{
		Name: "backend-batch-interval", Sets: "etcd's --backend-batch-interval (longest time between backend commits)",
		Limit: "a positive duration such as 100ms (" + etcdLimits.Source["batchTicker"] + ")",
		parse: positiveDuration,
		apply: func(c *Config, v Value) { c.Embedded.BackendBatchInterval = v.d },
	},
	{
		Name: "backend-batch-limit", Sets: "etcd's --backend-batch-limit (most writes per backend commit)",
		Limit: "a whole number of at least 1 (" + etcdLimits.Source["batchDefault"] + ")",
		parse: intIn(1, 1<<31-1),
		apply: func(c *Config, v Value) { c.Embedded.BackendBatchLimit = int(v.n) },
	},
	{
		Name: "peer-rtt", Sets: "the round trip between the embedded etcd's members (each member's peers reach it through a link that holds every byte for half of it each way; 0: none)",
		Limit: "a duration of 0 or more such as 50ms, with 3 members",
		parse: nonNegativeDuration,
		apply: func(c *Config, v Value) { c.Embedded.PeerRTT = v.d },
	},
	{
		Name: "peer-jitter", Sets: "the spread of each round trip between the embedded etcd's members (uniform over peer-rtt +- it)",
		Limit: "a duration from 0 to peer-rtt",
		parse: nonNegativeDuration,
		apply: func(c *Config, v Value) { c.Embedded.PeerJitter = v.d },
	},
	{
		Name: "members", Sets: "the embedded etcd's members",
		Limit: "1 or 3 (etcdbench's embedded etcd)",
		parse: oneOf(1, 3),
		apply: func(c *Config, v Value) { c.Embedded.Members = int(v.n) },
	},
	{
		Name: "dir", Sets: "the directory (so the disk) the embedded etcd's data goes into; each gets its own scratch directory",
		Limit: "an existing directory",
		parse: directory,
		apply: func(c *Config, v Value) { c.Dir = v.Text },
	},
	{
		Name: "clients", Sets: "the load's --clients",
		Limit: "a whole number of at least 1",
		parse: intIn(1, 1<<20),
		apply: func(c *Config, v Value) { c.Load.Clients = int(v.n) },
	},
	{
		Name: "conns", Sets: "the load's --conns (gRPC connections)",
		Limit: "a whole number of at least 1",
		parse: intIn(1, 1<<16),
		apply: func(c *Config, v Value) { c.Load.Conns = int(v.n) },
	},
	{
		Name: "val-size", Sets: "the load's --val-size (bytes per value)",
		Limit: "a size of 0 bytes or more such as 256 or 4k",
		parse: size(0),
		apply: func(c *Config, v Value) { c.Load.ValSize = int(v.n) },
	},
}

// Lookup returns the setting called name, or nil.
func Lookup(name string) *Setting {
	for _, s := range Settings {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Names lists the settings' names.
func Names() []string {
	out := make([]string, len(Settings))
	for i, s := range Settings {
		out[i] = s.Name
	}
	return out
}

func intIn(lo, hi int64) func(string) (Value, error) {
	return func(s string) (Value, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err == nil && n >= lo && n <= hi:
		case hi >= 1<<31-1:
			return Value{}, fmt.Errorf("want a whole number of at least %d", lo)
		default:
			return Value{}, fmt.Errorf("want a whole number from %d to %d", lo, hi)
		}
		return Value{Text: strconv.FormatInt(n, 10), n: n}, nil
	}
}

func oneOf(vs ...int64) func(string) (Value, error) {
	return func(s string) (Value, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		for _, v := range vs {
			if err == nil && n == v {
				return Value{Text: strconv.FormatInt(n, 10), n: n}, nil
			}
		}
		return Value{}, fmt.Errorf("want one of %v", vs)
	}
}

// millis parses etcd's millisecond settings: a plain number is
// milliseconds (etcd's flags are uints of milliseconds), "150ms" or "1s"
// work too; etcd cannot take fractions of a millisecond.
func millis(lo, hi int64) func(string) (Value, error) {
	return func(s string) (Value, error) {
		d, err := units.ParseMillis(s)
		if err != nil {
			return Value{}, fmt.Errorf("want milliseconds such as 100 or 100ms")
		}
		switch {
		case d%time.Millisecond != 0:
			return Value{}, fmt.Errorf("etcd takes whole milliseconds")
		case d < time.Duration(lo)*time.Millisecond || d > time.Duration(hi)*time.Millisecond:
			return Value{}, fmt.Errorf("want %d to %d ms", lo, hi)
		}
		return Value{Text: d.String(), d: d, n: d.Milliseconds()}, nil
	}
}

func positiveDuration(s string) (Value, error) {
	d, err := units.ParseDuration(s)
	if err != nil || d <= 0 {
		return Value{}, fmt.Errorf("want a positive duration such as 100ms")
	}
	return Value{Text: d.String(), d: d}, nil
}

func nonNegativeDuration(s string) (Value, error) {
	d, err := units.ParseDuration(s)
	if err != nil || d < 0 {
		return Value{}, fmt.Errorf("want a duration of 0 or more such as 50ms")
	}
	return Value{Text: d.String(), d: d}, nil
}

func size(lo int64) func(string) (Value, error) {
	return func(s string) (Value, error) {
		n, err := units.ParseSize(s)
		if err != nil || n < lo {
			return Value{}, fmt.Errorf("want a size of at least %d bytes such as 256, 4k or 2g", lo)
		}
		return Value{Text: strconv.FormatInt(n, 10), n: n}, nil
	}
}

// directory checks that s is an existing directory and gives its absolute
// path, so that two spellings of one directory are one value.
func directory(s string) (Value, error) {
	if s == "" {
		return Value{}, errors.New("empty directory")
	}
	abs, err := scratch.Check(s)
	if err != nil {
		return Value{}, err
	}
	return Value{Text: abs}, nil
}
