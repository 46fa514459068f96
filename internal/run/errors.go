package run

import (
	"errors"
	"fmt"
)

// ErrFailed is returned by a command whose report says FAIL; the report has
// already explained why, so nothing more is printed (exit code 1).
var ErrFailed = errors.New("a verdict failed")

// UsageError marks a mistake in what the user asked for (exit code 2): a
// bad flag, argument or setting, found before anything was measured.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usagef returns a UsageError with the formatted message.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// Usage marks err as a UsageError (nil stays nil).
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return UsageError{err}
}

// IsUsage reports whether err is, or wraps, a UsageError.
func IsUsage(err error) bool {
	var u UsageError
	return errors.As(err, &u)
}
