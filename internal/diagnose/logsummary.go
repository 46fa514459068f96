package diagnose

import (
	"fmt"
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
	// KindSpaceExceeded: "database space exceeded", "exceeded backend
	// quota" or the NOSPACE alarm raised (the db reached
	// --quota-backend-bytes and etcd refuses writes).
	KindSpaceExceeded Kind = "db_space_exceeded"
)

// Kinds lists every Kind in report order.
var Kinds = []Kind{KindSlowFdatasync, KindSlowApply, KindHeartbeatLate, KindSlowRequest, KindElection, KindSpaceExceeded}

// Event is one recognised log line.
type Event struct {
	Kind Kind
	// Time is the line's timestamp (zero when it has none, or only a
	// year-less one).
	Time time.Time
	// NoYear is the line's time when its only timestamp is that of
	// journalctl's default short (or short-precise) output, which has no
	// year: month, day and time of day in year 0, read as UTC. Time is
	// then zero: ReadLogs places the event in the year the log's dated
	// lines give, or leaves it without a time (LogSummary.Undated).
	NoYear time.Time
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
	// Undated counts the events whose only time is journalctl's
	// year-less one in a log without a dated line to take the year
	// from: they are counted, but in no minute and without a time.
	Undated int

	// noYear holds the year-less times until the end of the log says
	// which year they are in.
	noYear struct {
		perMinute   map[Kind]map[time.Time]int // minutes in year 0
		first, last time.Time
	}
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
	switch {
	case !e.Time.IsZero():
		ks.PerMinute[e.Time.UTC().Truncate(time.Minute)]++
	case !e.NoYear.IsZero():
		if s.noYear.perMinute == nil {
			s.noYear.perMinute = map[Kind]map[time.Time]int{}
		}
		if s.noYear.perMinute[e.Kind] == nil {
			s.noYear.perMinute[e.Kind] = map[time.Time]int{}
		}
		// Truncate counts from year 1: year 0 needs the fields.
		n := e.NoYear
		s.noYear.perMinute[e.Kind][time.Date(n.Year(), n.Month(), n.Day(), n.Hour(), n.Minute(), 0, 0, time.UTC)]++
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

// span widens [first, last] to t, unless t is zero.
func span(first, last, t time.Time) (time.Time, time.Time) {
	if t.IsZero() {
		return first, last
	}
	if first.IsZero() || t.Before(first) {
		first = t
	}
	if last.IsZero() || t.After(last) { // year-0 times are before the zero time
		last = t
	}
	return first, last
}

// placeYearless gives the year-less times (journalctl's short format)
// the year of the log's dated lines - for each, the year that puts it
// nearest to them, so that a log across New Year gets both years - and
// counts them as Undated when no line is dated: a time shown in year 0,
// or in a guessed year, would mislead more than no time.
func (s *LogSummary) placeYearless() {
	if s.noYear.first.IsZero() {
		return
	}
	if s.First.IsZero() {
		for _, mins := range s.noYear.perMinute {
			for _, n := range mins {
				s.Undated += n
			}
		}
		s.noYear.perMinute = nil
		return
	}
	first, last := s.First, s.Last
	for k, mins := range s.noYear.perMinute {
		for m, n := range mins {
			s.Kinds[k].PerMinute[withYear(m, first, last)] += n
		}
	}
	for _, ks := range s.Kinds {
		if ks.Worst.Time.IsZero() && !ks.Worst.NoYear.IsZero() {
			ks.Worst.Time = withYear(ks.Worst.NoYear, first, last)
		}
	}
	s.First, s.Last = span(s.First, s.Last, withYear(s.noYear.first, first, last))
	s.First, s.Last = span(s.First, s.Last, withYear(s.noYear.last, first, last))
	s.noYear.perMinute = nil
}

// withYear returns t (in year 0) in the year near first's or last's that
// puts it nearest to [first, last], ties going to the earlier year; the
// four years either side always hold a leap year for a February 29th.
func withYear(t, first, last time.Time) time.Time {
	var best time.Time
	var bestDist time.Duration
	for _, base := range []int{first.Year(), last.Year()} {
		for y := base - 4; y <= base+4; y++ {
			c := time.Date(y, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
			if c.Day() != t.Day() {
				continue // February 29th in a common year
			}
			var d time.Duration
			switch {
			case c.Before(first):
				d = first.Sub(c)
			case c.After(last):
				d = c.Sub(last)
			}
			if best.IsZero() || d < bestDist || (d == bestDist && c.Before(best)) {
				best, bestDist = c, d
			}
		}
	}
	return best
}

// Notes say what a reader of the summary should know beside the counts:
// events left without a time.
func (s *LogSummary) Notes() []string {
	if s == nil || s.Undated == 0 {
		return nil
	}
	return []string{fmt.Sprintf("log: %d event(s) have only journalctl's year-less time (its default short format) and no line of the log says the year: "+
		"they are counted but placed in no minute; journalctl -o short-iso (or short-iso-precise) prints full times", s.Undated)}
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
