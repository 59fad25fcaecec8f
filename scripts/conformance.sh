#!/usr/bin/env bash
# The main job: runs the cross-adapter conformance suite over every adapter
# whose database is reachable (memory, bbolt and sqlite always) and prints a
# matrix of spec method x backend: pass, fail or not implemented.
#
#   ./scripts/conformance.sh
#
# A backend's database comes from its AUTHPORT_*_URL variable; where that is
# unset and a server answers on this machine's default port, that server is
# used; otherwise the backend shows as unavailable. It starts nothing itself: the test
# command (scripts/test.sh) does.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

# answers HOST PORT: whether something accepts TCP connections there.
answers() { timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }

default_url() { # VAR PORT URL
	if [ -z "${!1:-}" ] && answers 127.0.0.1 "$2"; then
		export "$1=$3"
	fi
}
default_url AUTHPORT_POSTGRES_URL 5432 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
default_url AUTHPORT_MYSQL_URL 3306 'root@tcp(127.0.0.1:3306)/test?parseTime=true'
default_url AUTHPORT_REDIS_URL 6379 'redis://127.0.0.1:6379/0'
default_url AUTHPORT_REDIS_CLUSTER_URL 7001 '127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003'
default_url AUTHPORT_MONGODB_URL 27018 'mongodb://127.0.0.1:27018/'

matrix_bin=$(mktemp -d -t authport-matrix.XXXXXX)/authport-matrix
(cd conformance && go build -o "$matrix_bin" ./cmd/authport-matrix)

for dir in adapters/*/; do
	[ -f "$dir/go.mod" ] || continue
	printf 'running conformance in %s\n' "$dir" >&2
	(cd "$dir" && go test -json -count=1 -run '^TestConformance$' ./... 2>&1) || true
done | "$matrix_bin"
