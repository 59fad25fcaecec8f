#!/usr/bin/env bash
# The test command: makes every database the tests need reachable (as
# scripts/services.sh does), then checks formatting, vets, checks that
# `go mod tidy` changes nothing, lints the GitHub workflows, runs `npm ci`
# for the interop suites, every module's tests with -race (replaying every
# fuzz corpus) and the consumer check of the release (tools/release).
#
#   ./scripts/test.sh                          everything, as CI runs it
#   AUTHPORT_REQUIRE=all ./scripts/test.sh     a missing database fails the run
#   AUTHPORT_SERVICES=none ./scripts/test.sh   use only the AUTHPORT_*_URL variables already set
#   AUTHPORT_FUZZTIME=10s ./scripts/test.sh    also fuzz every target (scripts/fuzz.sh)
#
# Full output goes to $AUTHPORT_LOG_DIR (default: a temporary directory);
# the console gets failures, skips, a summary per module and per
# conformance backend, and stdout a closing "N passed, N failed, N skipped".
# The logic is tools/ci's (test.go).
exec "$(dirname "${BASH_SOURCE[0]}")/ci.sh" test "$@"
