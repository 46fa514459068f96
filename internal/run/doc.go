// Package run owns the lifecycle every etcdbench command that measures
// shares, written once: the scratch directory (checked, sized, created and
// removed on every path), the result envelope (tool, command line,
// environment, times), the notes about stale scratch directories a killed
// run left, what an interruption keeps, and the live progress line. It also
// holds the kinds of error the command line maps to exit codes, so that no
// package below cmd calls back into it.
package run
