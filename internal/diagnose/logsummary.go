package diagnose

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind is a class of log event that the rules read.
type Kind string

// The log events counted, with the message etcd writes for each.
const (
	// KindSlowApply: "apply request took too long" (over
	// --warning-apply-duration, 100 ms).
	KindSlowApply Kind = "slow_apply"
	// KindSlowFdatasync: "slow fdatasync" (a WAL sync over 1 s).
	KindSlowFdatasync Kind = "slow_fdatasync"
	// KindHeartbeatLate: "leader failed to send out heartbeat on time".
	KindHeartbeatLate Kind = "heartbeat_late"
	// KindSlowRequest: other "took too long" and "request stats" lines
	// (slow reads, range requests, read-only requests).
	KindSlowRequest Kind = "slow_request"
	// KindElection: leader lost, elected or became leader.
	KindElection Kind = "election"
	// KindSpaceExceeded: "database space exceeded" (the NOSPACE alarm).
	KindSpaceExceeded Kind = "db_space_exceeded"
)

// Kinds lists every Kind in report order.
var Kinds = []Kind{KindSlowFdatasync, KindSlowApply, KindHeartbeatLate, KindSlowRequest, KindElection, KindSpaceExceeded}

// Event is one recognised log line.
type Event struct {
	Kind Kind
	// Time is the line's timestamp (zero when it has none).
	Time time.Time
	// Took is how long the operation took, when the line says (zero
	// otherwise).
	Took time.Duration
	// Message is the line's message, e.g. "apply request took too long".
	Message string
	// Line is the whole line, cut to a readable length.
	Line string
}

// KindStats counts the events of one kind.
type KindStats struct {
	Count int
	// Worst is the event that took longest (the first one when none
	// says how long it took).
	Worst Event
	// PerMinute counts events by the minute of their timestamp (UTC).
	PerMinute map[time.Time]int
}

// LogSummary is what a log said.
type LogSummary struct {
	Lines      int // lines read
	Recognised int // lines counted as an event
	// Formats counts lines by the format they were read as ("zap",
	// "capnslog", "journal+zap"...); lines of no known format are
	// "other".
	Formats     map[string]int
	Kinds       map[Kind]*KindStats
	First, Last time.Time // the earliest and latest timestamps seen
	// Terms are the raft terms that election lines name ("at term 5"):
	// one term is the election at start, more mean the leader changed.
	Terms map[int]bool
	// LostLeader counts "lost leader" lines.
	LostLeader int
}

// Count returns the number of events of kind k.
func (s *LogSummary) Count(k Kind) int {
	if s == nil || s.Kinds[k] == nil {
		return 0
	}
	return s.Kinds[k].Count
}

// add counts one event.
func (s *LogSummary) add(e Event) {
	s.Recognised++
	ks := s.Kinds[e.Kind]
	if ks == nil {
		ks = &KindStats{Worst: e, PerMinute: map[time.Time]int{}}
		s.Kinds[e.Kind] = ks
	}
	ks.Count++
	if e.Took > ks.Worst.Took {
		ks.Worst = e
	}
	if !e.Time.IsZero() {
		ks.PerMinute[e.Time.UTC().Truncate(time.Minute)]++
	}
	if e.Kind == KindElection {
		if m := termOf.FindStringSubmatch(e.Message); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				s.Terms[n] = true
			}
		}
		if strings.Contains(e.Message, "lost leader") {
			s.LostLeader++
		}
	}
}

// termOf finds the term of raft's election lines.
var termOf = regexp.MustCompile(`at term (\d{1,18})`)

// Minutes returns the minutes with events of any kind, in order.
func (s *LogSummary) Minutes() []time.Time {
	seen := map[time.Time]bool{}
	var out []time.Time
	for _, ks := range s.Kinds {
		for m := range ks.PerMinute {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// newSummary returns an empty summary.
func newSummary() *LogSummary {
	return &LogSummary{Formats: map[string]int{}, Kinds: map[Kind]*KindStats{}, Terms: map[int]bool{}}
}
