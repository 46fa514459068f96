package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"etcdbench/internal/scratch"
)

// Exit codes, documented in README.md.
const (
	exitOK          = 0   // every verdict PASS or WARN
	exitFail        = 1   // at least one verdict FAIL
	exitUsage       = 2   // bad flags, arguments or --dir
	exitRuntime     = 3   // the run could not be done (permissions, space, I/O errors)
	exitInterrupted = 130 // stopped by a signal: 128 + its number (SIGHUP 129, SIGINT 130, SIGTERM 143)
)

// errFailed is returned by a command whose report says FAIL; the report has
// already explained why, so nothing more is printed.
var errFailed = errors.New("a verdict failed")

// usageError marks a mistake in what the user asked for.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitCode maps an error to the documented exit code and prints it on one
// line to stderr.
func exitCode(err error, cmdPath string, stderr io.Writer) int {
	var u usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errFailed):
		return exitFail
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "etcdbench: interrupted; what it wrote (scratch files, keys) was removed")
		return exitInterrupted
	case errors.As(err, &u), errors.Is(err, scratch.ErrNotExist), errors.Is(err, scratch.ErrNotDir):
		fmt.Fprintf(stderr, "etcdbench: %s (see '%s --help')\n", oneLine(err), cmdPath)
		return exitUsage
	}
	fmt.Fprintf(stderr, "etcdbench: %s\n", oneLine(err))
	return exitRuntime
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
