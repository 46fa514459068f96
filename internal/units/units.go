// Package units parses and prints the sizes and durations of etcdbench's
// command line. Sizes follow fio: a plain number is bytes and k, m, g, t
// (with or without a trailing "b" or "ib", any case) are powers of 1024, so
// `--size 22m` means what it means in the fio recipe. Durations accept Go's
// syntax ("1m30s", "500ms") and, like fio, a bare number of seconds.
//
// It also converts and prints the result model's figures: seconds kept as
// float64 (FromSeconds) and a value in its unit (FormatValue,
// FormatDuration), so that every report, tune's table and check's
// evidence print one value alike.
package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("invalid value")

// ParseSize parses a byte count such as "2300", "4k", "22m", "1GiB".
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, fmt.Errorf("%w: empty size", ErrSyntax)
	}
	t = strings.TrimSuffix(t, "ib")
	t = strings.TrimSuffix(t, "b")
	mult := int64(1)
	if n := len(t); n > 0 {
		if i := strings.IndexByte("kmgt", t[n-1]); i >= 0 {
			mult = int64(1) << (10 * (i + 1))
			t = t[:n-1]
		}
	}
	if t == "" || strings.ContainsAny(t, "+-") && !strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%w: size %q: want bytes like 2300, 4k, 22m or 1g", ErrSyntax, s)
	}
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%w: size %q is negative", ErrSyntax, s)
	}
	if strings.ContainsAny(t, ".eE") {
		f, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return 0, fmt.Errorf("%w: size %q: want bytes like 2300, 4k, 22m or 1g", ErrSyntax, s)
		}
		v := f * float64(mult)
		if v >= math.MaxInt64/2 {
			return 0, fmt.Errorf("%w: size %q is too large", ErrSyntax, s)
		}
		return int64(v), nil
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%w: size %q is too large", ErrSyntax, s)
		}
		return 0, fmt.Errorf("%w: size %q: want bytes like 2300, 4k, 22m or 1g", ErrSyntax, s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%w: size %q is too large", ErrSyntax, s)
	}
	return n * mult, nil
}

// ParseDuration parses "60s", "1m30s", "500ms" or a bare number of seconds.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("%w: empty duration", ErrSyntax)
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		if f < 0 || math.IsNaN(f) || f > math.MaxInt64/float64(time.Second) {
			return 0, fmt.Errorf("%w: duration %q is out of range", ErrSyntax, s)
		}
		return FromSeconds(f), nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%w: duration %q: want e.g. 60s, 1m30s, 500ms or a number of seconds", ErrSyntax, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%w: duration %q is negative", ErrSyntax, s)
	}
	return d, nil
}

// ParseMillis parses etcd's millisecond settings (--heartbeat-interval,
// --election-timeout): a bare whole number is milliseconds, as etcd's
// flags take it; "150ms" or "1s" work too.
func ParseMillis(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		if n < 0 || n > math.MaxInt64/int64(time.Millisecond) {
			return 0, fmt.Errorf("%w: %q milliseconds is out of range", ErrSyntax, s)
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%w: %q: want milliseconds such as 100 or 100ms", ErrSyntax, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%w: %q is negative", ErrSyntax, s)
	}
	return d, nil
}

// FormatBytes prints a byte count with a binary unit, e.g. "22.0 MiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
