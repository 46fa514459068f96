#!/usr/bin/env bash
# Builds the comparison program in bench/$1/ and runs it with the remaining
# arguments; each comparison's bench/<name>/run script is
# one line that calls this.
#
# This is `go run ./bench/$1 "$@"` from the repository root, except that
# the program is built first and run directly: go run turns every non-zero
# exit into 1, and the exit codes (2: bad flags or no fio, 1: a tool failed
# to run, 130: interrupted) are part of the interface.
set -euo pipefail

prog="$1"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="$(mktemp -d "${TMPDIR:-/tmp}/$prog-bin.XXXXXX")"
trap 'rm -rf "$bin"' EXIT
(cd "$root" && go build -o "$bin/$prog" "./bench/$prog")

# Relative paths in flags (and the default --dir) stay relative to where the
# script was started; ./cmd/etcdbench is built from the repository root.
export BENCH_CALLER_DIR="$PWD"
cd "$root"
rc=0
"$bin/$prog" "$@" || rc=$?
exit "$rc"
