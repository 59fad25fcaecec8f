#!/usr/bin/env bash
# The main job: runs the cross-adapter conformance suite over every adapter
# and prints a matrix of spec method x backend: pass, fail or not implemented.
#
#   ./scripts/conformance.sh
#
# Each server backend's database is found or started by scripts/services.sh
# (an AUTHPORT_*_URL already set is used as is); one that cannot be provided
# says why in one line and shows as unavailable. memory, bbolt and sqlite
# need nothing. A line per backend reports progress as it starts and ends.
# The adapters run at once (-p 4: they wait on their databases, not the CPU).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
log=$(mktemp -d -t authport-conformance.XXXXXX)

# The server backends of the table of backends (conformance/backendtable).
for s in $("$root/scripts/ci.sh" backends | awk -F '\t' '$3 != "embedded" { print $1 }'); do
	if exports=$(AUTHPORT_SERVICES=$s "$root/scripts/services.sh" 2>"$log/$s.log"); then
		eval "$exports"
	else
		printf 'conformance: %s unavailable: %s (log: %s)\n' "$s" "$(grep -m1 ERROR "$log/$s.log" || tail -1 "$log/$s.log")" "$log/$s.log" >&2
	fi
done

(cd conformance && go build -o "$log/authport-matrix" ./cmd/authport-matrix)
printf 'conformance: running every adapter (go test -json -run ^TestConformance$)\n' >&2
{ go test -json -count=1 -p 4 -run '^TestConformance$' github.com/authport/authport/adapters/... 2>&1 || true; } |
	"$log/authport-matrix" -progress
