package tune

import (
	"strconv"

	"github.com/spf13/pflag"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/netcheck"
	"etcdbench/internal/run"
)

// EmbeddedFlags are the embedded etcd's settings as a command's flags:
// each value is parsed and checked by its Setting, as --vary's are.
type EmbeddedFlags struct {
	members             int
	snapshotCount       uint64
	heartbeat, election string
	quotaBackendBytes   string
	batchInterval       string
	batchLimit          int
	peerRTT, peerJitter string
	peerRTTFrom         string
}

// Members is --members as given.
func (f *EmbeddedFlags) Members() int { return f.members }

// Register adds the flags to fs.
func (f *EmbeddedFlags) Register(fs *pflag.FlagSet) {
	fs.IntVar(&f.members, "members", 1, "embedded etcd members: 1 or 3")
	fs.Uint64Var(&f.snapshotCount, "snapshot-count", 0, "embedded etcd's --snapshot-count (default: etcd's)")
	fs.StringVar(&f.heartbeat, "heartbeat-interval", "", "embedded etcd's --heartbeat-interval: milliseconds as etcd's flag (100) or a duration (100ms) (default: etcd's)")
	fs.StringVar(&f.election, "election-timeout", "", "embedded etcd's --election-timeout: milliseconds as etcd's flag (1000) or a duration (1s) (default: etcd's)")
	fs.StringVar(&f.quotaBackendBytes, "quota-backend-bytes", "", "embedded etcd's --quota-backend-bytes, e.g. 2g (default: etcd's)")
	fs.StringVar(&f.batchInterval, "backend-batch-interval", "", "embedded etcd's --backend-batch-interval, e.g. 100ms (default: etcd's)")
	fs.IntVar(&f.batchLimit, "backend-batch-limit", 0, "embedded etcd's --backend-batch-limit (default: etcd's)")
	fs.StringVar(&f.peerRTT, "peer-rtt", "", "round trip between the embedded etcd's 3 members, e.g. 50ms: each member's peers reach it through a link of this process that holds every byte for half of it each way (default: none)")
	fs.StringVar(&f.peerJitter, "peer-jitter", "", "spread of each round trip between the members (uniform over --peer-rtt +- it; default: none)")
	fs.StringVar(&f.peerRTTFrom, "peer-rtt-from", "", "put the members as far apart as `etcdbench net -o json` measured in FILE: its worst peer's round trip p50, with the jitter of its p99 (instead of --peer-rtt)")
}

// Options turns the flags into the embedded etcd's Options, each value
// checked by etcd's own rule as --vary checks it; errors are usage
// errors.
func (f *EmbeddedFlags) Options() (etcdcluster.Options, error) {
	c := Config{Embedded: etcdcluster.Options{Members: f.members, SnapshotCount: f.snapshotCount, BackendBatchLimit: f.batchLimit}}
	if f.peerRTTFrom != "" {
		if f.peerRTT != "" || f.peerJitter != "" {
			return c.Embedded, run.Usagef("--peer-rtt-from and --peer-rtt/--peer-jitter are alternatives: give one")
		}
		var err error
		if f.peerRTT, f.peerJitter, err = netcheck.PeerNetworkFile(f.peerRTTFrom); err != nil {
			return c.Embedded, err
		}
	}
	for _, set := range [][2]string{{"members", strconv.Itoa(f.members)}, {"heartbeat-interval", f.heartbeat}, {"election-timeout", f.election}, {"backend-batch-interval", f.batchInterval}, {"quota-backend-bytes", f.quotaBackendBytes}, {"peer-rtt", f.peerRTT}, {"peer-jitter", f.peerJitter}} {
		if set[1] == "" {
			continue
		}
		s := Lookup(set[0])
		v, err := s.ParseFlag(set[1])
		if err != nil {
			return c.Embedded, run.Usage(err)
		}
		s.Apply(&c, v)
	}
	if err := c.Embedded.Validate(); err != nil {
		return c.Embedded, run.Usage(err)
	}
	return c.Embedded, nil
}
