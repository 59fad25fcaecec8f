#!/usr/bin/env bash
# fuzz.sh — run every Go fuzz target of the workspace for a while.
#
#   ./scripts/fuzz.sh                        every target, 10 s each
#   ./scripts/fuzz.sh 'Redis|Escape'         targets whose "pkgdir FuzzName" matches
#   AUTHPORT_FUZZTIME=60s ./scripts/fuzz.sh  look harder (any -fuzztime value)
#
# Targets are found by reading the *_test.go files of every module in
# go.work (tools/* are not in go.work and are left out): each
# `func FuzzXxx(f *testing.F)` is run on its own with
#
#   go test -run '^$' -fuzz '^FuzzXxx$' -fuzztime 10s
#
# in its package directory. One line per target goes to stdout: ok or FAIL,
# the package directory, the target, the executions and their rate. A target
# that fails (a crasher, a broken seed, a build failure) fails the run; for a
# crasher the line names the input file Go wrote under
# <pkgdir>/testdata/fuzz/<FuzzName>/, which `go test -run FuzzXxx/<file>`
# replays. Keep that file as a seed once the bug is fixed. The full output of
# each target goes to $AUTHPORT_LOG_DIR (default: a temporary directory).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
fuzztime=${AUTHPORT_FUZZTIME:-10s}
filter=${1:-}
log_dir=${AUTHPORT_LOG_DIR:-$(mktemp -d -t authport-fuzz.XXXXXX)}
mkdir -p "$log_dir"

# "<package dir> <FuzzName>" for every fuzz target, sorted.
targets=()
while IFS= read -r mod; do
	while IFS=: read -r file _ line; do
		name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
		targets+=("$(dirname "${file#"$root"/}") $name")
	done < <(grep -rnE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\([a-z_]+ \*testing\.F\)' "$mod" || true)
done < <(go list -m -f '{{.Dir}}')
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort -u)

failed=0 ran=0 skipped=0
for t in "${targets[@]}"; do
	[ -n "$t" ] || continue
	if [ -n "$filter" ] && ! grep -qE -- "$filter" <<<"$t"; then
		continue
	fi
	read -r dir name <<<"$t"
	log="$log_dir/$(tr / _ <<<"$dir")_$name.log"
	ran=$((ran + 1))
	note=""
	if (cd "$dir" && go test -v -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" . >"$log" 2>&1); then
		status=ok
		# A target whose server is missing skips (unless AUTHPORT_REQUIRE
		# names it, and then it fails).
		if grep -q -e "--- SKIP: $name" "$log"; then
			status=skip
			skipped=$((skipped + 1))
		fi
	elif ! grep -q 'Failing input written' "$log" &&
		[ "$(grep -A1 -e "^--- FAIL: $name " "$log" | tail -1 | tr -d '[:space:]')" = contextdeadlineexceeded ] &&
		! grep -qE -e '^\s+\S+\.go:[0-9]+: ' -e '^panic:' "$log"; then
		# Go's fuzz coordinator can report its own -fuzztime deadline as a
		# failure (golang/go#75804, fixed in Go 1.27): no input failed.
		status=ok
		note=" (ended by golang/go#75804: \"context deadline exceeded\" with no failing input)"
	else
		status=FAIL
		failed=$((failed + 1))
	fi
	# The last status line, "fuzz: elapsed: 10s, execs: 123456 (0/sec), …",
	# has the total; its rate is that of the last interval, so the rate
	# printed is the total over the elapsed time.
	stats=$(sed -nE 's/^fuzz: elapsed: ([0-9]+)s, execs: ([0-9]+) .*/\1 \2/p' "$log" | tail -1 |
		awk '{ printf "%d execs in %ds (%d/s)", $2, $1, ($1 > 0 ? $2 / $1 : $2) }' || true)
	if [ "$status" = skip ]; then
		stats=$(grep -E '^\s+\S+\.go:[0-9]+: ' "$log" | tail -1 | sed -E 's/^\s+//')
	fi
	printf '%-4s  %-28s %-28s %s%s\n' "$status" "$dir" "$name" "${stats:-no executions reported}" "$note"
	if [ "$status" = FAIL ]; then
		crasher=$(sed -nE 's/.*Failing input written to (.*)$/\1/p' "$log" | tail -1)
		if [ -n "$crasher" ]; then
			printf '      crasher: %s/%s (replay: cd %s && go test -run %s/%s)\n' \
				"$dir" "$crasher" "$dir" "$name" "$(basename "$crasher")"
		fi
		grep -E -m 20 -e '--- FAIL' -e '^\s+\S+\.go:[0-9]+: ' -e '^panic:' -e 'build failed' "$log" | sed 's/^/      /' || true
		printf '      full output: %s\n' "$log"
	fi
done

echo "fuzz: $ran targets for $fuzztime each, $failed failed, $skipped skipped (logs in $log_dir)"
[ "$failed" -eq 0 ]
