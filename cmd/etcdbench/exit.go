package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"etcdbench/internal/exporter"
	"etcdbench/internal/run"
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

// exitCodesHelp ends the long help of every command that runs a test or
// judges results: the exit codes of README.md, in one form.
const exitCodesHelp = `

Exit codes: 0 every verdict PASS or WARN, 1 a verdict FAIL, 2 bad flags,
arguments or input, 3 the run could not be done (permissions, space, I/O
errors, an unreachable etcd), 129, 130 or 143 interrupted (SIGHUP, SIGINT,
SIGTERM).`

// exitCode maps an error to the documented exit code and prints it on one
// line to stderr.
func exitCode(err error, cmdPath string, stderr io.Writer) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, run.ErrFailed):
		return exitFail
	case errors.Is(err, exporter.ErrStopped):
		fmt.Fprintf(stderr, "etcdbench: %s\n", oneLine(err))
		return exitInterrupted
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "etcdbench: interrupted; what it wrote (scratch files, keys) was removed")
		return exitInterrupted
	case run.IsUsage(err), errors.Is(err, scratch.ErrNotExist), errors.Is(err, scratch.ErrNotDir), errors.Is(err, scratch.ErrNotStorage):
		fmt.Fprintf(stderr, "etcdbench: %s (see '%s --help')\n", oneLine(err), cmdPath)
		return exitUsage
	}
	fmt.Fprintf(stderr, "etcdbench: %s\n", oneLine(err))
	return exitRuntime
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
