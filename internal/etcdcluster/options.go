package etcdcluster

import (
	"errors"
	"fmt"
	"time"
)

// ErrBadOptions is returned by Options.Validate (and Start) for an
// embedded etcd that etcd itself would refuse to start.
var ErrBadOptions = errors.New("bad embedded etcd settings")

// etcd's defaults and limits of the raft timings.
const (
	// DefaultHeartbeat and DefaultElection are etcd's --heartbeat-interval
	// and --election-timeout (server/embed/config.go NewConfig: TickMs 100,
	// ElectionMs 1000).
	DefaultHeartbeat = 100 * time.Millisecond
	DefaultElection  = 1000 * time.Millisecond
	// ElectionRuleSource is where etcd refuses an election timeout under
	// five heartbeats.
	ElectionRuleSource = "etcd server/embed/config.go (*Config).Validate: 5*TickMs > ElectionMs is refused"
)

// ElectionBreach says how heartbeat and election (0: etcd's default)
// break etcd's rule that the election timeout be at least five heartbeat
// intervals, e.g. "election-timeout 300 ms < 5 x heartbeat-interval
// 100 ms"; "" when they keep it.
func ElectionBreach(heartbeat, election time.Duration) string {
	tick, tickFrom := orDefault(heartbeat, DefaultHeartbeat)
	el, elFrom := orDefault(election, DefaultElection)
	if 5*tick.Milliseconds() <= el.Milliseconds() {
		return ""
	}
	return fmt.Sprintf("election-timeout %d ms%s < 5 x heartbeat-interval %d ms%s", el.Milliseconds(), elFrom, tick.Milliseconds(), tickFrom)
}

func orDefault(d, def time.Duration) (time.Duration, string) {
	if d == 0 {
		return def, " (etcd's default)"
	}
	return d, ""
}

// Validate refuses what etcd would refuse at start, so that the mistake is
// reported as one before a scratch directory or a member exists: a member
// count other than 1 or 3 (0 is 1), and an election timeout under five
// heartbeat intervals.
func (o Options) Validate() error {
	if n := o.Members; n != 0 && n != 1 && n != 3 {
		return fmt.Errorf("%w: %d members: want 1 or 3", ErrBadOptions, n)
	}
	switch {
	case o.PeerRTT < 0 || o.PeerJitter < 0:
		return fmt.Errorf("%w: peer round trip %v, jitter %v: want positive durations", ErrBadOptions, o.PeerRTT, o.PeerJitter)
	case o.PeerRTT > 0 && max(o.Members, 1) == 1:
		return fmt.Errorf("%w: a peer round trip (%v) needs members to be apart: give 3 members", ErrBadOptions, o.PeerRTT)
	case o.PeerJitter > o.PeerRTT:
		return fmt.Errorf("%w: peer jitter %v over the round trip %v: want at most the round trip", ErrBadOptions, o.PeerJitter, o.PeerRTT)
	case len(o.MemberRTT) > 0 && max(o.Members, 1) != 3:
		return fmt.Errorf("%w: a member's own round trip needs members to be apart: give 3 members", ErrBadOptions)
	case o.Links && max(o.Members, 1) != 3:
		return fmt.Errorf("%w: links between members need 3 members", ErrBadOptions)
	case len(o.MemberRTT) > max(o.Members, 1):
		return fmt.Errorf("%w: round trips for %d members of %d", ErrBadOptions, len(o.MemberRTT), o.Members)
	}
	for i, d := range o.MemberRTT {
		if d < 0 {
			return fmt.Errorf("%w: member %d's round trip %v: want a positive duration", ErrBadOptions, i+1, d)
		}
	}
	if why := ElectionBreach(o.HeartbeatInterval, o.ElectionTimeout); why != "" {
		return fmt.Errorf("%w: etcd refuses --election-timeout below 5 x --heartbeat-interval: %s (%s)", ErrBadOptions, why, ElectionRuleSource)
	}
	return nil
}
