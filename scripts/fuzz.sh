#!/usr/bin/env bash
# fuzz.sh — run every Go fuzz target of the go.work modules for a while.
#
#   ./scripts/fuzz.sh                        every target, 10 s each
#   ./scripts/fuzz.sh 'Redis|Escape'         targets whose "pkgdir FuzzName" matches
#   AUTHPORT_FUZZTIME=60s ./scripts/fuzz.sh  look harder (any -fuzztime value)
#
# One line per target: ok, skip or FAIL, the package directory, the target,
# the executions and their rate. A crasher fails the run; its line names the
# input file Go wrote under <pkgdir>/testdata/fuzz/<FuzzName>/, which
# `go test -run FuzzXxx/<file>` replays: keep it as a seed with the fix.
# Full output of each target goes to $AUTHPORT_LOG_DIR (default: a
# temporary directory). The logic is tools/ci's (fuzz.go).
exec "$(dirname "${BASH_SOURCE[0]}")/ci.sh" fuzz "$@"
