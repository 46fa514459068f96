package diagnose

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// maxLineBytes bounds one log line; longer lines are counted but cut.
const maxLineBytes = 1 << 20

// maxShownLine is how much of a line a note shows.
const maxShownLine = 300

// ParseLogs reads etcd logs: zap JSON (etcd 3.4-3.7), capnslog text
// ("2019-08-13 11:12:13.123456 W | etcdserver: ..."), either behind
// the prefix of journalctl's short output modes (journalPrefix), and
// counts the events the rules read. Lines of other formats are counted
// and skipped. It does no I/O.
func ParseLogs(b []byte) *LogSummary {
	s, _ := ReadLogs(bytes.NewReader(b))
	return s
}

// ReadLogs is ParseLogs over a stream, so that a large log need not fit
// in memory; the error is r's.
func ReadLogs(r io.Reader) (*LogSummary, error) {
	s := newSummary()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	sc.Split(scanLinesCut)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		s.Lines++
		format, ev, ok := ParseLogLine(line)
		s.Formats[format]++
		s.First, s.Last = span(s.First, s.Last, ev.Time)
		if !ev.NoYear.IsZero() {
			s.noYear.first, s.noYear.last = span(s.noYear.first, s.noYear.last, ev.NoYear)
		}
		if ok {
			s.add(ev)
		}
	}
	s.placeYearless()
	return s, sc.Err()
}

// scanLinesCut is bufio.ScanLines that cuts lines longer than
// maxLineBytes instead of stopping.
func scanLinesCut(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	if adv == 0 && tok == nil && err == nil && len(data) >= maxLineBytes {
		return len(data), data[:maxLineBytes], nil
	}
	return adv, tok, err
}

// journalPrefix is the prefix journalctl's short output modes put before
// a message - a time, the host and the identifier - with the time in
// group 1 (short and short-precise), 2 (short-iso and short-iso-precise)
// or 3 (short-full):
//
//	short (default)    "Nov 22 04:31:02 host etcd[123]: "
//	short-precise      "Nov 22 04:31:02.123456 host etcd[123]: "
//	short-iso          "2026-11-22T04:31:02+0000 host etcd[123]: " (newer systemd: +00:00)
//	short-iso-precise  "2026-11-22T04:31:02.123456+0000 host etcd[123]: "
//	short-full         "Sun 2026-11-22 04:31:02 UTC host etcd[123]: "
//
// (as systemd 252's journalctl prints them).
var journalPrefix = regexp.MustCompile(`^(?:` +
	`([A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d(?:\.\d{1,9})?)` +
	`|(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d))` +
	`|[A-Z][a-z]{2} (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,9})? (?:[A-Za-z]{1,6}|[+-]\d\d(?::?\d\d)?))` +
	`) \S+ [^\s:\[]+(?:\[\d+\])?: `)

// journalTime reads the time of a journalPrefix match m. The short and
// short-precise modes have no year and no zone: the time comes back in
// year 0, read as UTC (journalctl --utc makes that true), with yearless
// set. A short-full time in a zone named by an abbreviation other than
// UTC or GMT (CET, IST...) names no offset a pure parser can know: it
// comes back zero.
func journalTime(m []string) (t time.Time, yearless bool) {
	switch {
	case m[1] != "": // short, short-precise
		if t, err := time.Parse("Jan _2 15:04:05", m[1]); err == nil {
			return t, true
		}
	case m[2] != "": // short-iso, short-iso-precise
		for _, layout := range []string{"2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05Z07:00"} {
			if t, err := time.Parse(layout, m[2]); err == nil {
				return t.UTC(), false
			}
		}
	case m[3] != "": // short-full, its weekday left out
		clock, zone, _ := strings.Cut(m[3][11:], " ")
		off, known := zoneOffset(zone)
		if !known {
			return time.Time{}, false
		}
		if t, err := time.Parse("2006-01-02 15:04:05", m[3][:11]+clock); err == nil {
			return t.Add(-off), false
		}
	}
	return time.Time{}, false
}

// zoneOffset reads short-full's zone: UTC, GMT, or an offset such as
// "-04" or "+0530" (what strftime's %Z gives for zones without an
// abbreviation); not an abbreviation such as CET, which would take the
// machine's zone database and still be ambiguous (IST).
func zoneOffset(zone string) (time.Duration, bool) {
	switch {
	case zone == "UTC" || zone == "GMT":
		return 0, true
	case len(zone) < 3 || (zone[0] != '+' && zone[0] != '-'):
		return 0, false
	}
	h, err := strconv.Atoi(zone[1:3])
	if err != nil {
		return 0, false
	}
	m := 0
	if rest := strings.TrimPrefix(zone[3:], ":"); rest != "" {
		if m, err = strconv.Atoi(rest); err != nil || len(rest) != 2 {
			return 0, false
		}
	}
	off := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if zone[0] == '-' {
		off = -off
	}
	return off, true
}

// criPrefix is the container runtime's log prefix (/var/log/pods/...,
// kubectl logs of a static etcd pod on disk): "2024-01-02T03:04:05.123456789Z stderr F ".
var criPrefix = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:\d\d)) (?:stdout|stderr) [FP] `)

// dockerLog returns the line inside Docker's json-file log record
// {"log":"...\n","stream":"stderr","time":"..."}.
func dockerLog(line string) (string, bool) {
	if !strings.HasPrefix(line, `{"log":`) {
		return "", false
	}
	var rec struct {
		Log string `json:"log"`
	}
	if json.Unmarshal([]byte(line), &rec) != nil || rec.Log == "" {
		return "", false
	}
	return strings.TrimRight(rec.Log, "\r\n"), true
}

// capnslogLine is "2019-08-13 11:12:13.123456 W | pkg: message".
var capnslogLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) ([DINWEC]) \| (.*)$`)

// goLogLine is Go's log package format, which etcd's raft and gRPC use
// beside capnslog: "raft2019/08/13 11:12:13 INFO: ...", "WARNING:
// 2019/08/13 11:12:13 [core] ...".
var goLogLine = regexp.MustCompile(`^[A-Za-z]*:? ?(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (.*)$`)

// consoleLine is zap's console encoding (etcd --log-format=console):
// "2024-01-02T03:04:05.678Z\tWARN\tcaller.go:12\tmessage\t{...}".
var consoleLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:?\d\d))\t([A-Z]+)\t(?:[^\t]*\.go:\d+\t)?([^\t]*)(?:\t(\{.*\}))?$`)

// ParseLogLine reads one line: its format ("zap", "zap-console",
// "capnslog", "golog", any of them behind "journal+", "cri+" or
// "docker+", "journal" alone, or "other") and, when it is one of the
// events counted, the event.
func ParseLogLine(line string) (format string, ev Event, ok bool) {
	rest, prefix := line, ""
	var outerTime time.Time // the prefix's
	var yearless bool
	if m := journalPrefix.FindStringSubmatch(line); m != nil {
		prefix = "journal"
		rest = line[len(m[0]):]
		outerTime, yearless = journalTime(m)
	} else if m := criPrefix.FindStringSubmatch(line); m != nil {
		prefix = "cri"
		rest = line[len(m[0]):]
		if t, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
			outerTime = t
		}
	} else if inner, ok := dockerLog(line); ok {
		prefix, rest = "docker", inner
	}
	var msg, took string
	switch {
	case strings.HasPrefix(rest, "{"):
		var ok bool
		if ev.Time, msg, took, ok = parseZap(rest); ok {
			format = "zap"
		}
	default:
		if m := capnslogLine.FindStringSubmatch(rest); m != nil {
			format = "capnslog"
			if t, err := time.Parse("2006-01-02 15:04:05.999999", m[1]); err == nil {
				ev.Time = t
			}
			msg = m[3]
		} else if m := consoleLine.FindStringSubmatch(rest); m != nil {
			format = "zap-console"
			if t, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
				ev.Time = t
			}
			msg = m[3]
			if m[4] != "" {
				took = tookOf(m[4])
				if e := errorOf(m[4]); e != "" {
					msg += ": " + e
				}
			}
		} else if m := goLogLine.FindStringSubmatch(rest); m != nil {
			format = "golog"
			if t, err := time.Parse("2006/01/02 15:04:05.999999", m[1]); err == nil {
				ev.Time = t
			}
			msg = m[2]
		}
	}
	switch {
	case format == "" && prefix == "":
		return "other", Event{}, false
	case format == "":
		format, msg = prefix, rest
	case prefix != "":
		format = prefix + "+" + format
	}
	if ev.Time.IsZero() {
		if yearless {
			ev.NoYear = outerTime
		} else {
			ev.Time = outerTime
		}
	}
	kind, found := classify(msg, rest)
	if !found {
		return format, Event{Time: ev.Time, NoYear: ev.NoYear}, false
	}
	ev.Kind, ev.Message = kind, cut(msg, 120)
	ev.Line = cut(line, maxShownLine)
	if took != "" {
		if d, err := time.ParseDuration(strings.ReplaceAll(took, "µ", "u")); err == nil && d > 0 {
			ev.Took = d
		}
	}
	if ev.Took == 0 {
		ev.Took = longestDuration(msg)
	}
	return format, ev, true
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// zapTookFields are the fields in which etcd's zap lines say how long
// something took, in order of preference.
var zapTookFields = []string{"took", "exceeded-duration", "duration", "time-spent", "time spent"}

// parseZap reads a zap JSON line's time, message and duration field.
func parseZap(line string) (ts time.Time, msg, took string, ok bool) {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return time.Time{}, "", "", false
	}
	msg, ok = m["msg"].(string)
	if !ok {
		return time.Time{}, "", "", false
	}
	switch v := m["ts"].(type) {
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"} {
			if t, err := time.Parse(layout, v); err == nil {
				ts = t
				break
			}
		}
	case float64:
		if v > 0 && v < 1e11 {
			sec := int64(v)
			ts = time.Unix(sec, int64((v-float64(sec))*1e9)).UTC()
		}
	}
	took = tookField(m)
	// Some messages keep the detail in "error" (database space exceeded).
	if e, isStr := m["error"].(string); isStr {
		msg += ": " + e
	}
	return ts, msg, took, true
}

// tookField returns the first duration field of a zap line's fields.
func tookField(m map[string]any) string {
	for _, f := range zapTookFields {
		switch v := m[f].(type) {
		case string:
			if v != "" {
				return v
			}
		case float64: // zap's seconds encoding of durations
			if v > 0 && v < 1e9 {
				return strconv.FormatFloat(v, 'f', -1, 64) + "s"
			}
		}
	}
	return ""
}

// tookOf and errorOf read the JSON fields of a console-encoded line.
func tookOf(fields string) string {
	var m map[string]any
	if json.Unmarshal([]byte(fields), &m) != nil {
		return ""
	}
	return tookField(m)
}

func errorOf(fields string) string {
	var m map[string]any
	if json.Unmarshal([]byte(fields), &m) != nil {
		return ""
	}
	e, _ := m["error"].(string)
	return e
}

// classify maps a message (and, for errors quoted anywhere, the whole
// line) to the kind of event it is.
func classify(msg, line string) (Kind, bool) {
	l, ll := strings.ToLower(msg), strings.ToLower(line)
	switch {
	case strings.Contains(ll, "database space exceeded") || strings.Contains(l, "exceeded backend quota") ||
		(strings.Contains(line, "NOSPACE") && strings.Contains(ll, "alarm") && strings.Contains(ll, "raise")):
		// etcd 3.4 writes only the NOSPACE alarm when a put hits the
		// quota ("alarm raised" with "alarm":"NOSPACE", capnslog
		// "alarm NOSPACE raised by peer ..."); the apply path says
		// "exceeded backend quota" and the clients "database space
		// exceeded".
		return KindSpaceExceeded, true
	case strings.Contains(l, "slow fdatasync") || strings.Contains(l, "sync duration of"):
		return KindSlowFdatasync, true
	case strings.Contains(l, "failed to send out heartbeat on time"):
		return KindHeartbeatLate, true
	case strings.Contains(l, "apply request took too long") || strings.Contains(l, "apply entries took too long"):
		return KindSlowApply, true
	case strings.Contains(l, "took too long") || strings.Contains(l, "request stats") || strings.HasPrefix(l, "trace["):
		return KindSlowRequest, true
	case strings.Contains(l, "elected leader") || strings.Contains(l, "lost leader") || strings.Contains(l, "became leader"):
		return KindElection, true
	}
	return "", false
}

// durationToken matches Go-formatted durations such as 1.5s, 401.8ms,
// 1m2.5s, 250µs.
var durationToken = regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+(\.\d+)?(ns|us|µs|ms|s|m|h)\b`)

// longestDuration returns the longest duration written in s (capnslog
// lines say "took too long (1.2s)", "sync duration of 1.5s, expected less
// than 1s", "exceeded the 100ms timeout for 401.8ms"), 0 if none.
func longestDuration(s string) time.Duration {
	var best time.Duration
	for _, tok := range durationToken.FindAllString(s, 16) {
		d, err := time.ParseDuration(strings.ReplaceAll(tok, "µ", "u"))
		if err == nil && d > best {
			best = d
		}
	}
	return best
}
