package verdict

import (
	"fmt"

	"etcdbench/internal/units"
)

// Status is the outcome of one judgement. Its order is PASS < WARN < FAIL.
type Status int

// The statuses, in order of severity.
const (
	Pass Status = iota
	Warn
	Fail
)

func (s Status) String() string {
	switch s {
	case Pass:
		return "PASS"
	case Warn:
		return "WARN"
	case Fail:
		return "FAIL"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// MarshalText writes the status as PASS, WARN or FAIL.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads PASS, WARN or FAIL.
func (s *Status) UnmarshalText(b []byte) error {
	for _, c := range []Status{Pass, Warn, Fail} {
		if string(b) == c.String() {
			*s = c
			return nil
		}
	}
	return fmt.Errorf("unknown status %q", b)
}

// Confidence says how sure a verdict is.
type Confidence struct {
	Decided bool `json:"decided"` // the data settle the question at Level
	// Level is the confidence level, e.g. 0.95; 0 when the verdict comes
	// from rules over a fixed amount of data, not a statistical bound
	// (Method says how it was decided).
	Level  float64 `json:"level"`
	Method string  `json:"method"` // how the level was reached
	Detail string  `json:"detail"` // the bounds in words
}

// Sure says in words how sure the verdict is, for reports: "decided at
// 95 % confidence", "NOT decided at 95 % confidence", or, without a
// level, the method.
func (c Confidence) Sure() string {
	switch {
	case c.Level == 0:
		return c.Method
	case c.Decided:
		return fmt.Sprintf("decided at %.0f %% confidence", 100*c.Level)
	}
	return fmt.Sprintf("NOT decided at %.0f %% confidence", 100*c.Level)
}

// Verdict is one judgement of one figure against one threshold.
type Verdict struct {
	Check      string      `json:"check"` // the threshold's ID
	Title      string      `json:"title"`
	Status     Status      `json:"status"`
	Value      float64     `json:"value"` // the figure, in Unit
	Unit       string      `json:"unit"`
	Limit      float64     `json:"limit"`
	Comparison string      `json:"comparison"` // "<" or ">=": what passing means
	Source     string      `json:"source"`
	Confidence *Confidence `json:"confidence,omitempty"`
	Detail     string      `json:"detail"` // plain words: what it means, what to do
	// Advisory is set on a FAIL that counts as a WARN in the overall
	// result, its Detail saying why: the closed-loop WAL test failed on a
	// storage shown to carry etcd's load (check's rule, docs/verdicts.md).
	Advisory bool `json:"advisory,omitempty"`
	// WarnLimit is the stricter limit, in Unit and with the same
	// Comparison, that a figure meeting Limit must also meet to PASS (the
	// 500 IOPS recommended for heavy load beside the 50 etcd needs, a p99
	// 20 % under its limit); nil when Limit alone decides. Results
	// written before it existed have none.
	WarnLimit *float64 `json:"warn_limit,omitempty"`
}

// ShownLimit is the limit that made v's status, for a verdict line: the
// warn limit for a WARN whose figure meets Limit but not the warn limit,
// else Limit (a FAIL's, a PASS's, and a WARN's that warns for another
// reason, such as an undecided figure under both limits or over both).
func (v Verdict) ShownLimit() float64 {
	if v.Status == Warn && v.WarnLimit != nil && meets(v.Value, v.Comparison, v.Limit) && !meets(v.Value, v.Comparison, *v.WarnLimit) {
		return *v.WarnLimit
	}
	return v.Limit
}

// LimitText is the limit that made v's status with its comparison, as a
// verdict line shows it: "< 10ms", ">= 50/s"; a count that must stay
// under 1 reads "= 0", not "< 1" beside a figure of 1.
func (v Verdict) LimitText() string {
	l := v.ShownLimit()
	if v.Unit == "count" && v.Comparison == "<" && l == 1 {
		return "= 0"
	}
	return v.Comparison + " " + units.FormatValue(l, v.Unit)
}

// meets reports whether value passes limit under comparison (what
// passing means: "<", "<=", ">=", ">").
func meets(value float64, comparison string, limit float64) bool {
	switch comparison {
	case "<":
		return value < limit
	case "<=":
		return value <= limit
	case ">":
		return value > limit
	}
	return value >= limit
}

// Counted is the status v counts as in an overall result: an advisory
// FAIL counts as a WARN.
func (v Verdict) Counted() Status {
	if v.Advisory && v.Status == Fail {
		return Warn
	}
	return v.Status
}

// Worst returns the most severe status among vs as each counts
// (Counted), or Pass for none.
func Worst(vs []Verdict) Status {
	w := Pass
	for _, v := range vs {
		if c := v.Counted(); c > w {
			w = c
		}
	}
	return w
}
