package strace

// Parsing the output of
//
//	strace -f -T -tt -y -s 0 -p PID -e trace=write,pwrite64,writev,fdatasync,fsync
//
// one line at a time, e.g.
//
//	8774  04:18:17.501154 write(11</d/member/wal/0-0.wal>, ""..., 120) = 120 <0.000021>
//	8737  04:18:17.494990 fdatasync(11</d/member/wal/0-0.wal> <unfinished ...>
//	8737  04:18:17.495422 <... fdatasync resumed>) = 0 <0.000399>
//	8737  04:17:37.519746 --- SIGURG {si_signo=SIGURG, ...} ---
//
// A call another thread interrupts is split into an "unfinished" line,
// which has the arguments, and a "resumed" line, which has the result and
// the duration; Parser joins them per thread.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"etcdbench/internal/units"
)

// LineKind says what a line of strace output is.
type LineKind int

// The kinds of line.
const (
	Other      LineKind = iota // signals, exits, attach messages
	CallLine                   // a whole call: name(args) = ret <dur>
	Unfinished                 // name(args <unfinished ...>
	Resumed                    // <... name resumed>rest) = ret <dur>
)

// Line is one parsed line.
type Line struct {
	Kind LineKind
	PID  int           // thread id; 0 when the line has none (strace without -f)
	At   time.Duration // time of day from -tt; -1 without it
	Name string        // system call
	FD   int           // first argument when it is a descriptor; -1 otherwise
	Path string        // what -y printed for the descriptor (<...>), or ""
	Ret  int64         // return value; -1 for an error or an unknown result
	Err  string        // errno name (EAGAIN...), "?" for an unknown result, "" on success
	Dur  time.Duration // from -T; -1 without it
}

// errSyntax marks a line that is not strace output of the expected shape.
var errSyntax = errors.New("unexpected line")

// ParseLine parses one line of strace output (without its newline).
// Lines that are not system calls (signals, exits, attach messages, blank)
// are Other; a line that looks like a call but cannot be read is an
// error.
func ParseLine(s string) (Line, error) {
	l := Line{FD: -1, At: -1, Ret: -1, Dur: -1}
	s = strings.TrimRight(s, " \r")
	// thread id: "1234  " with -o FILE, "[pid  1234] " on a terminal
	if rest, ok := strings.CutPrefix(s, "[pid"); ok {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return l, fmt.Errorf("%w: %q", errSyntax, s)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(rest[:end]))
		if err != nil {
			return l, fmt.Errorf("%w: thread id in %q", errSyntax, s)
		}
		l.PID, s = pid, strings.TrimLeft(rest[end+1:], " ")
	} else if i := strings.IndexByte(s, ' '); i > 0 && allDigits(s[:i]) {
		pid, err := strconv.Atoi(s[:i])
		if err != nil {
			return l, fmt.Errorf("%w: thread id in %q", errSyntax, s)
		}
		l.PID, s = pid, strings.TrimLeft(s[i:], " ")
	}
	// time of day: 04:18:17.494990
	if len(s) >= 9 && s[2] == ':' && s[5] == ':' {
		end := strings.IndexByte(s, ' ')
		if end < 0 {
			end = len(s)
		}
		at, err := parseTimeOfDay(s[:end])
		if err != nil {
			return l, fmt.Errorf("%w: time in %q", errSyntax, s)
		}
		l.At, s = at, strings.TrimLeft(s[end:], " ")
	}
	switch {
	case s == "", strings.HasPrefix(s, "---"), strings.HasPrefix(s, "+++"), strings.HasPrefix(s, "strace:"):
		return l, nil
	case strings.HasPrefix(s, "<..."):
		end := strings.Index(s, " resumed>")
		if end < 0 {
			return l, fmt.Errorf("%w: %q", errSyntax, s)
		}
		l.Kind, l.Name = Resumed, strings.TrimSpace(s[len("<..."):end])
		return l, l.parseResult(s[end+len(" resumed>"):])
	}
	open := strings.IndexByte(s, '(')
	if open <= 0 || !isIdent(s[:open]) {
		return l, fmt.Errorf("%w: %q", errSyntax, s)
	}
	l.Name = s[:open]
	args := s[open+1:]
	l.FD, l.Path = parseFDArg(args)
	if strings.HasSuffix(args, "<unfinished ...>") {
		l.Kind = Unfinished
		return l, nil
	}
	l.Kind = CallLine
	return l, l.parseResult(args)
}

// parseResult reads "... ) = ret [ERRNO (text)] [<dur>]" at the end of s.
func (l *Line) parseResult(s string) error {
	if d := strings.LastIndex(s, " <"); d >= 0 && strings.HasSuffix(s, ">") {
		if dur, err := strconv.ParseFloat(s[d+2:len(s)-1], 64); err == nil && dur >= 0 && dur < 1e9 {
			l.Dur = units.FromSeconds(dur)
			s = s[:d]
		}
	}
	eq := strings.LastIndex(s, ") = ")
	if eq < 0 {
		if strings.HasSuffix(s, ") = ?") || strings.HasSuffix(s, " = ?") {
			l.Err = "?"
			return nil
		}
		return fmt.Errorf("%w: no result in %q", errSyntax, s)
	}
	res := strings.Fields(s[eq+len(") = "):])
	if len(res) == 0 {
		return fmt.Errorf("%w: no result in %q", errSyntax, s)
	}
	if res[0] == "?" {
		l.Err = "?"
		return nil
	}
	v, err := strconv.ParseInt(res[0], 0, 64)
	if err != nil {
		return fmt.Errorf("%w: result %q", errSyntax, res[0])
	}
	l.Ret = v
	if v < 0 {
		l.Ret = -1
		if len(res) > 1 {
			l.Err = res[1]
		} else {
			l.Err = "error"
		}
	}
	return nil
}

// parseFDArg reads a leading descriptor argument, "11" or "11</path>".
func parseFDArg(args string) (int, string) {
	i := 0
	for i < len(args) && args[i] >= '0' && args[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 {
		return -1, ""
	}
	fd, _ := strconv.Atoi(args[:i])
	rest := args[i:]
	if !strings.HasPrefix(rest, "<") {
		return fd, ""
	}
	// the path ends at the '>' before the next argument, the closing
	// parenthesis or the unfinished marker; a path may itself hold '>'
	end := -1
	for _, stop := range []string{">, ", ">)", "> <unfinished"} {
		if j := strings.Index(rest, stop); j > 0 && (end < 0 || j < end) {
			end = j
		}
	}
	if end < 0 {
		if strings.HasSuffix(rest, ">") {
			end = len(rest) - 1
		} else {
			return fd, ""
		}
	}
	return fd, rest[1:end]
}

func parseTimeOfDay(s string) (time.Duration, error) {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return 0, errSyntax
	}
	h, err1 := strconv.Atoi(s[0:2])
	m, err2 := strconv.Atoi(s[3:5])
	sec, err3 := strconv.ParseFloat(s[6:], 64)
	if err1 != nil || err2 != nil || err3 != nil || h < 0 || h > 23 || m < 0 || m > 59 || !(sec >= 0 && sec < 61) {
		return 0, errSyntax
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + units.FromSeconds(sec), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != "" && len(s) <= 9
}

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// Parser joins the unfinished and resumed halves of calls, per thread.
type Parser struct {
	pending map[int]Line
	// Orphans counts resumed lines whose start was not seen (a call in
	// progress when strace attached) and unreadable lines.
	Orphans, Bad int
	// At is the time of day of the last line that had one (-tt), or -1.
	At time.Duration
}

// Line parses one line and returns the completed call it finishes, if any.
// Unfinished halves are kept until their thread's resumed line.
func (p *Parser) Line(s string) (Line, bool) {
	l, err := ParseLine(s)
	if err != nil {
		p.Bad++
		return l, false
	}
	p.At = l.At
	switch l.Kind {
	case CallLine:
		return l, true
	case Unfinished:
		if p.pending == nil {
			p.pending = make(map[int]Line)
		}
		p.pending[l.PID] = l
	case Resumed:
		start, ok := p.pending[l.PID]
		if !ok || start.Name != l.Name {
			p.Orphans++
			return l, false
		}
		delete(p.pending, l.PID)
		start.Kind, start.Ret, start.Err, start.Dur = CallLine, l.Ret, l.Err, l.Dur
		return start, true
	}
	return l, false
}
