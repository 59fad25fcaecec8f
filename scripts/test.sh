#!/usr/bin/env bash
# The test command: makes every database the tests need reachable (see
# scripts/services.sh), then checks formatting, vets, runs every module's
# tests with -race, checks that `go mod tidy` changes nothing, and lints the
# GitHub workflows, and runs the consumer check of the release
# (tools/release).
#
#   ./scripts/test.sh                          everything, as CI runs it
#   AUTHPORT_REQUIRE=all ./scripts/test.sh     a missing database fails the run
#   AUTHPORT_SERVICES=none ./scripts/test.sh   use only the AUTHPORT_*_URL variables already set
#
# Full `go test -v` output goes to $AUTHPORT_LOG_DIR (default: a temporary
# directory); the console gets failures, skips, a per-backend conformance
# summary and a closing "N passed, N failed, N skipped" line.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
log_dir=${AUTHPORT_LOG_DIR:-$(mktemp -d -t authport-test.XXXXXX)}
mkdir -p "$log_dir"
# The tests see it too, and save artifacts there (the browser tests'
# screenshots, for one).
export AUTHPORT_LOG_DIR=$log_dir
failures=()

step() { printf '\n== %s\n' "$*" >&2; }
fail() { failures+=("$1"); printf 'FAILED: %s\n' "$1" >&2; }

step "services"
if [ "${AUTHPORT_SERVICES:-}" != none ]; then
	exports=$("$root/scripts/services.sh")
	eval "$exports"
	printf '%s\n' "$exports" | sed 's/^/  /' >&2
fi

# The workspace modules, then the tools: tools/mongostandin and tools/dex
# stay out of go.work (FerretDB's and dex's dependencies need not share a
# build list with the adapters'), so each is built and tested on its own,
# with GOWORK=off.
mapfile -t modules < <(go list -m -f '{{.Dir}}' | sed "s|^$root/||")
mapfile -t tools < <(find tools -mindepth 2 -maxdepth 2 -name go.mod -printf '%h\n' | sort)

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go') 2>&1 || true)
if [ -n "$unformatted" ]; then
	printf '%s\n' "$unformatted" >&2
	fail "gofmt: run gofmt -w on the files above"
fi

step "go vet"
for m in "${modules[@]}"; do
	(cd "$m" && go vet ./...) || fail "go vet in $m"
done
for m in "${tools[@]}"; do
	(cd "$m" && GOWORK=off go vet ./...) || fail "go vet in $m"
done

step "go mod tidy"
for m in "${modules[@]}" "${tools[@]}"; do
	(cd "$m" && GOWORK=off go mod tidy -diff >"$log_dir/tidy.diff" 2>&1) || {
		cat "$log_dir/tidy.diff" >&2
		fail "go mod tidy would change $m/go.mod or go.sum: run it there"
	}
done

step "actionlint"
actionlint_version=v1.7.12
gobin=${XDG_CACHE_HOME:-$HOME/.cache}/authport/bin
if [ ! -x "$gobin/actionlint-$actionlint_version" ]; then
	mkdir -p "$gobin"
	GOBIN="$gobin" GOWORK=off go install "github.com/rhysd/actionlint/cmd/actionlint@$actionlint_version"
	mv "$gobin/actionlint" "$gobin/actionlint-$actionlint_version"
fi
"$gobin/actionlint-$actionlint_version" .github/workflows/*.yml || fail "actionlint"

# Interop suites run real npm packages (e.g. Auth.js in jwt/interop): install
# each one's pinned dependencies with `npm ci` in every directory that holds a
# package-lock.json (node_modules excluded), before the Go tests
# that use them. Without npm those tests skip, unless AUTHPORT_REQUIRE is
# `all` or names `npm`, and then the run fails here.
step "npm ci (interop suites)"
mapfile -t npm_dirs < <(find . \( -name node_modules -o -name .git \) -prune -o -name package-lock.json -printf '%h\n' | sed 's|^\./||' | sort -u)
if [ ${#npm_dirs[@]} -gt 0 ]; then
	if command -v npm >/dev/null; then
		for d in "${npm_dirs[@]}"; do
			printf '  %s\n' "$d" >&2
			(cd "$d" && npm ci --no-audit --no-fund >"$log_dir/npm-$(echo "$d" | tr / _).log" 2>&1) || {
				tail -20 "$log_dir/npm-$(echo "$d" | tr / _).log" >&2
				fail "npm ci in $d"
			}
		done
	elif [[ ",${AUTHPORT_REQUIRE:-}," =~ ,(all|npm), ]]; then
		fail "npm is not installed (AUTHPORT_REQUIRE=$AUTHPORT_REQUIRE): install Node.js 20+ with npm"
	else
		printf '  npm is not installed: the interop tests in %s will skip\n' "${npm_dirs[*]}" >&2
	fi
fi

step "go test -race (full -v logs in $log_dir)"
for m in "${modules[@]}" "${tools[@]}"; do
	log="$log_dir/$(echo "$m" | tr / _).log"
	gowork=$(case "$m" in tools/*) echo off ;; *) go env GOWORK ;; esac)
	if (cd "$m" && GOWORK=$gowork go test -race -count=1 -v -timeout 15m ./... >"$log" 2>&1); then
		printf 'ok    %s\n' "$m" >&2
	else
		fail "go test in $m"
	fi
	# Failures and skips show on the console; passes only in the log.
	grep -E -e '--- (FAIL|SKIP)' -e '^(FAIL|panic:)' -e 'build failed' "$log" >&2 || true
	grep -E '^\s+[a-z_]+\.go:[0-9]+: ' "$log" | head -40 >&2 || true
done

# The fault-injection figures (tools/faults, TestFaults) go to the console
# too, not only to its log.
if [ -f "$log_dir/tools_faults.log" ]; then
	sed -n '/^Fault injection (tools\/faults/,/^$/p' "$log_dir/tools_faults.log" >&2
	sed -n '/^Failover under load (tools\/faults/,/^$/p' "$log_dir/tools_faults.log" >&2
fi

# The conformance suite on containers (conformance/backends): one line per
# backend on the console too.
if [ -f "$log_dir/conformance_backends.log" ]; then
	grep -h 'through testcontainers:' "$log_dir/conformance_backends.log" >&2 || true
fi

# Fuzzing: `go test` above replays every committed corpus (testdata/fuzz/…)
# of every Fuzz target, so the same tree always gives the same answer. The
# open-ended search (scripts/fuzz.sh) runs only when AUTHPORT_FUZZTIME asks
# for it: developers run it before they stop and commit each crasher as a
# seed beside its fix; CI never searches, so a new random crasher cannot fail
# a run that only replays.
if [ -n "${AUTHPORT_FUZZTIME:-}" ]; then
	step "fuzz (scripts/fuzz.sh, $AUTHPORT_FUZZTIME per target)"
	AUTHPORT_LOG_DIR="$log_dir/fuzz" "$root/scripts/fuzz.sh" >&2 || fail "fuzz: see the FAIL lines above"
fi

# The consumer check (tools/release): a module outside the repository, with
# GOWORK=off and the in-repo modules served by a local module proxy made of
# this tree, gets every adapter (and jwt, oauth, mail) with `go get`, builds
# and runs a program that signs a user in through it against the test
# databases, and must find no Docker or container client and no other
# adapter's driver in its build or its go.sum. The table goes to the log.
step "consumer check (every adapter and sign-in module from a module outside the repository)"
(cd tools/release && GOWORK=off go run . -C "$root" consumers) >&2 || fail "consumer check: see the table above (tools/release/consumer.go)"

step "conformance, per backend and variant (pass/fail/skip of TestConformance*/<backend>/<method>/<rule>)"
cat "$log_dir"/*.log | awk '
	match($0, /--- (PASS|FAIL|SKIP): TestConformance[A-Za-z]*\/[^\/ ]+\/[^\/ ]+\/[^ ]+/) {
		split(substr($0, RSTART, RLENGTH), f, /[: \/]+/)
		n[f[4]]++; r[f[4], f[2]]++
	}
	END { for (b in n) printf "  %-30s %4d rules: %4d passed, %d failed, %d skipped\n", b, n[b], r[b, "PASS"], r[b, "FAIL"], r[b, "SKIP"] }
' | sort >&2

passed=$(cat "$log_dir"/*.log | grep -c -E -e '--- PASS' || true)
failed=$(cat "$log_dir"/*.log | grep -c -E -e '--- FAIL' || true)
skipped=$(cat "$log_dir"/*.log | grep -c -E -e '--- SKIP' || true)

if [ ${#failures[@]} -gt 0 ]; then
	printf '\nThe run failed:\n' >&2
	printf '  %s\n' "${failures[@]}" >&2
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ ${#failures[@]} -eq 0 ]
