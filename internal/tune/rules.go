package tune

import (
	"fmt"
	"strings"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
)

// Rule is one of etcd's own rules over a whole configuration: a value that
// is fine alone may break it together with another (or with etcd's
// default for the other).
type Rule struct {
	ID string
	// Text is the rule in words, as an error states it.
	Text string
	// Source is where etcd enforces it.
	Source string
	// Warn marks a rule etcd only warns about: tune runs the combination
	// and notes the warning instead of refusing it.
	Warn bool
	// broken says how c breaks the rule, or "" when it does not.
	broken func(c Config) string
}

// Rules are etcd's rules that span settings, checked on every combination
// before anything runs. Single-value limits (election timeout at most
// 50000 ms...) are each Setting's own.
var Rules = []Rule{
	{
		ID:     "election-5x-heartbeat",
		Text:   "etcd refuses --election-timeout below 5 x --heartbeat-interval",
		Source: etcdcluster.ElectionRuleSource,
		broken: func(c Config) string {
			return etcdcluster.ElectionBreach(c.Embedded.HeartbeatInterval, c.Embedded.ElectionTimeout)
		},
	},
	{
		ID:     "peer-rtt-members",
		Text:   "a round trip between members needs members: peer-rtt and peer-jitter want 3",
		Source: "etcdbench: one member has no peers",
		broken: func(c Config) string {
			if e := c.Embedded; (e.PeerRTT > 0 || e.PeerJitter > 0) && e.Members != 3 {
				return fmt.Sprintf("peer-rtt %v with %d member(s)", e.PeerRTT, max(e.Members, 1))
			}
			if e := c.Embedded; e.PeerJitter > e.PeerRTT {
				return fmt.Sprintf("peer-jitter %v over peer-rtt %v", e.PeerJitter, e.PeerRTT)
			}
			return ""
		},
	},
	{
		ID:     "rtt-over-election",
		Text:   "a round trip between members at or over the election timeout: a follower's election timer runs out before a heartbeat and its answer can cross, so members campaign again and again and writes stall",
		Source: "etcd docs tuning.md (election timeout about 10x the round trip)",
		Warn:   true,
		broken: func(c Config) string {
			et := c.Embedded.ElectionTimeout
			if et == 0 {
				et = time.Second // etcd's default
			}
			if rtt := c.Embedded.LargestRTT(); rtt >= et {
				return fmt.Sprintf("peer-rtt %v (the largest pair's, jitter included) >= election-timeout %v", rtt, et)
			}
			return ""
		},
	},
	{
		ID:     "quota-over-max",
		Text:   "etcd warns that a --quota-backend-bytes over 8 GiB \"may lead to degraded performance\"",
		Source: etcdLimits.Source["maxQuota"],
		Warn:   true,
		broken: func(c Config) string {
			if q := c.Embedded.QuotaBackendBytes; q > etcdLimits.MaxQuotaBytes {
				return fmt.Sprintf("quota-backend-bytes %d > %d", q, etcdLimits.MaxQuotaBytes)
			}
			return ""
		},
	},
}

// check applies the rules and the load's own validation to the
// configuration of combination label. It returns etcd's warnings, or an
// error wrapping ErrBadVary for the first rule broken.
func check(label string, c Config) (warnings []string, err error) {
	for _, r := range Rules {
		why := r.broken(c)
		switch {
		case why == "":
		case r.Warn:
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s (%s)", label, r.Text, why, r.Source))
		default:
			return nil, fmt.Errorf("%w: combination %s: %s: %s (%s); every combination of the --vary values must be valid, so change the values",
				ErrBadVary, label, r.Text, why, r.Source)
		}
	}
	if n := c.Embedded.Members; n != 0 && n != 1 && n != 3 {
		return nil, fmt.Errorf("%w: combination %s: members %d: want 1 or 3", ErrBadVary, label, n)
	}
	l := c.Load
	// Validate needs endpoints; the embedded ones are known only later.
	l.Client.Endpoints = []string{"http://127.0.0.1:0"}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("%w: combination %s: %s", ErrBadVary, label, strings.TrimPrefix(err.Error(), etcdload.ErrBadLoad.Error()+": "))
	}
	return warnings, nil
}
