package tune

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/netcheck"
	"etcdbench/internal/run"
)

// ApartFlags are the embedded etcd's members and the round trip between
// them as a command's flags (--members, --peer-rtt, --peer-jitter,
// --peer-rtt-from): capacity's, and every embedded command's through
// EmbeddedFlags. --peer-rtt takes a list (0,2ms,10ms) where a command
// gives a row for each (Each).
type ApartFlags struct {
	members             int
	peerRTT, peerJitter string
	peerRTTFrom         string
}

// Members is --members as given.
func (f *ApartFlags) Members() int { return f.members }

// Register adds the flags to fs.
func (f *ApartFlags) Register(fs *pflag.FlagSet) {
	fs.IntVar(&f.members, "members", 1, "embedded etcd members: 1 or 3")
	fs.StringVar(&f.peerRTT, "peer-rtt", "", "round trip between the embedded etcd's 3 members, e.g. 50ms: each member's peers reach it through a link of this process that holds every byte for half of it each way (default: none); capacity and etcd capacity take a list, 0,2ms,10ms,50ms, and give a row each; mN=DURATION puts member N (1-3) that far from the others (a far zone), for every row: 1ms,m3=40ms")
	fs.StringVar(&f.peerJitter, "peer-jitter", "", "spread of each round trip between the members (uniform over --peer-rtt +- it; default: none)")
	fs.StringVar(&f.peerRTTFrom, "peer-rtt-from", "", "put the members as far apart as `etcdbench net -o json` measured in FILE: its worst peer's round trip p50, with the jitter of its p99 (instead of --peer-rtt)")
}

// rtts are --peer-rtt's round trips (--peer-rtt-from's, when given), as
// given: one "" when none is.
func (f *ApartFlags) rtts() (rtts []string, jitter string, err error) {
	rtt, jitter := f.peerRTT, f.peerJitter
	if f.peerRTTFrom != "" {
		if rtt != "" || jitter != "" {
			return nil, "", run.Usagef("--peer-rtt-from and --peer-rtt/--peer-jitter are alternatives: give one")
		}
		if rtt, jitter, err = netcheck.PeerNetworkFile(f.peerRTTFrom); err != nil {
			return nil, "", err
		}
	}
	return strings.Split(rtt, ","), jitter, nil
}

// memberRTT takes --peer-rtt's entries mN=D out of rtts: member N's (from
// 1) round trip to every other member, for every row.
func memberRTT(rtts []string) (rows []string, own []time.Duration, err error) {
	for _, e := range rtts {
		e = strings.TrimSpace(e)
		name, d, ok := strings.Cut(e, "=")
		if !ok {
			rows = append(rows, e)
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(name, "m"))
		if !strings.HasPrefix(name, "m") || err != nil || n < 1 || n > 3 {
			return nil, nil, run.Usagef("--peer-rtt %q: a member's own round trip is mN=DURATION, N from 1 to 3 (m3=40ms)", e)
		}
		v, err := Lookup("peer-rtt").ParseFlag(d)
		if err != nil {
			return nil, nil, run.Usage(err)
		}
		for len(own) < n {
			own = append(own, 0)
		}
		own[n-1] = v.d
	}
	if len(rows) == 0 {
		rows = []string{""}
	}
	return rows, own, nil
}

// set applies the members and one round trip to c, each value checked by
// its Setting as --vary's are.
func (f *ApartFlags) set(c *Config, rtt, jitter string) error {
	for _, set := range [][2]string{{"members", strconv.Itoa(f.members)}, {"peer-rtt", rtt}, {"peer-jitter", jitter}} {
		if set[1] == "" {
			continue
		}
		s := Lookup(set[0])
		v, err := s.ParseFlag(set[1])
		if err != nil {
			return run.Usage(err)
		}
		s.Apply(c, v)
	}
	return nil
}

// Each is the members put apart by each round trip of --peer-rtt's list,
// in its order: nil for one member with no round trip (nothing apart), one
// with no round trip for --members 3 alone. Errors are usage errors.
func (f *ApartFlags) Each() ([]etcdcluster.Options, error) {
	return f.each(etcdcluster.Options{})
}

func (f *ApartFlags) each(base etcdcluster.Options) ([]etcdcluster.Options, error) {
	rtts, jitter, err := f.rtts()
	if err != nil {
		return nil, err
	}
	rtts, own, err := memberRTT(rtts)
	if err != nil {
		return nil, err
	}
	if f.members <= 1 && len(rtts) == 1 && rtts[0] == "" && jitter == "" && own == nil {
		return nil, nil
	}
	var each []etcdcluster.Options
	for _, rtt := range rtts {
		c := Config{Embedded: base}
		c.Embedded.MemberRTT = own
		if err := f.set(&c, strings.TrimSpace(rtt), jitter); err != nil {
			return nil, err
		}
		if err := c.Embedded.Validate(); err != nil {
			return nil, run.Usage(err)
		}
		each = append(each, c.Embedded)
	}
	return each, nil
}

// EmbeddedFlags are the embedded etcd's settings as a command's flags:
// each value is parsed and checked by its Setting, as --vary's are.
type EmbeddedFlags struct {
	ApartFlags
	// Rows says the command takes a list of round trips, a row each
	// (Apart): Options is then the first's.
	Rows                bool
	snapshotCount       uint64
	heartbeat, election string
	quotaBackendBytes   string
	batchInterval       string
	batchLimit          int
	noPreVote           bool
}

// notBool is a boolean flag bound to its negation: --pre-vote=false sets
// noPreVote, so that flags never registered keep etcd's default.
type notBool struct{ not *bool }

func (b notBool) String() string {
	if b.not == nil {
		return "true"
	}
	return strconv.FormatBool(!*b.not)
}

func (b notBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	*b.not = !v
	return err
}

func (notBool) Type() string     { return "bool" }
func (notBool) IsBoolFlag() bool { return true }

// Register adds the flags to fs.
func (f *EmbeddedFlags) Register(fs *pflag.FlagSet) {
	f.ApartFlags.Register(fs)
	fs.Uint64Var(&f.snapshotCount, "snapshot-count", 0, "embedded etcd's --snapshot-count (default: etcd's)")
	fs.StringVar(&f.heartbeat, "heartbeat-interval", "", "embedded etcd's --heartbeat-interval: milliseconds as etcd's flag (100) or a duration (100ms) (default: etcd's)")
	fs.StringVar(&f.election, "election-timeout", "", "embedded etcd's --election-timeout: milliseconds as etcd's flag (1000) or a duration (1s) (default: etcd's)")
	fs.StringVar(&f.quotaBackendBytes, "quota-backend-bytes", "", "embedded etcd's --quota-backend-bytes, e.g. 2g (default: etcd's)")
	fs.StringVar(&f.batchInterval, "backend-batch-interval", "", "embedded etcd's --backend-batch-interval, e.g. 100ms (default: etcd's)")
	fs.IntVar(&f.batchLimit, "backend-batch-limit", 0, "embedded etcd's --backend-batch-limit (default: etcd's)")
	fs.Var(notBool{&f.noPreVote}, "pre-vote", "embedded etcd's --pre-vote; false as etcd before 3.5: a member cut off from the others deposes the leader when it comes back")
	fs.Lookup("pre-vote").NoOptDefVal = "true"
}

// Options turns the flags into the embedded etcd's Options, each value
// checked by etcd's own rule as --vary checks it; errors are usage
// errors, a list of round trips among them (Each takes one).
func (f *EmbeddedFlags) Options() (etcdcluster.Options, error) {
	each, err := f.Each()
	if err != nil {
		return etcdcluster.Options{}, err
	}
	if len(each) > 1 && !f.Rows {
		return etcdcluster.Options{}, run.Usagef("--peer-rtt %s: a list of round trips gives a row each in capacity and etcd capacity; this command takes one", f.peerRTT)
	}
	return each[0], nil
}

// Each is the embedded etcd's Options for each round trip of --peer-rtt's
// list, in its order (one for a single round trip or none).
func (f *EmbeddedFlags) Each() ([]etcdcluster.Options, error) {
	c := Config{Embedded: etcdcluster.Options{Members: f.members, SnapshotCount: f.snapshotCount, BackendBatchLimit: f.batchLimit, NoPreVote: f.noPreVote}}
	for _, set := range [][2]string{{"heartbeat-interval", f.heartbeat}, {"election-timeout", f.election}, {"backend-batch-interval", f.batchInterval}, {"quota-backend-bytes", f.quotaBackendBytes}} {
		if set[1] == "" {
			continue
		}
		s := Lookup(set[0])
		v, err := s.ParseFlag(set[1])
		if err != nil {
			return nil, run.Usage(err)
		}
		s.Apply(&c, v)
	}
	each, err := f.each(c.Embedded)
	if err != nil || each != nil {
		return each, err
	}
	if err := c.Embedded.Validate(); err != nil {
		return nil, run.Usage(err)
	}
	return []etcdcluster.Options{c.Embedded}, nil
}

// Apart is the embedded etcd's Options for each round trip of --peer-rtt
// (or --peer-rtt-from) when one was given, nil otherwise: a command of
// Rows runs one member, then a row each.
func (f *EmbeddedFlags) Apart() ([]etcdcluster.Options, error) {
	if f.peerRTT == "" && f.peerRTTFrom == "" {
		return nil, nil
	}
	return f.Each()
}
