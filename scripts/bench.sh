#!/usr/bin/env bash
# The bench command (tools/bench): every adapter whose database is
# reachable, beside a raw baseline on the same database and driver (one
# hand-written statement, command or script per operation), alternated in
# rounds, at concurrency 1 and 32 (pool of 32). Prints ops/s, p50, p99,
# round trips per operation and adapter/raw as a Markdown table. Then the
# HTTP rows: authport's handler beside Auth.js's own Auth() (Node, npm
# packages pinned in tools/bench/authjs, installed here with npm ci when
# missing) on the same PostgreSQL and Redis data, and on bbolt and JWT.
#
#   scripts/bench.sh                    the full run (a few minutes)
#   scripts/bench.sh -short             the quick run (tools/bench's test runs it too)
#   scripts/bench.sh -json out.json     also write the results as JSON
#   scripts/bench.sh -backends redis,postgres
#   scripts/bench.sh -scale             scale and purge figures (slow; not run in CI)
#   scripts/bench.sh -http none         without the HTTP rows (-http postgres,jwt: some)
#   scripts/bench.sh -backends bbolt -ops getSessionAndUser,getUserByAccount -http none
#
# It starts the services of the backends it benches (`-services` prints
# them, from the table of backends, conformance/backendtable: PostgreSQL,
# MariaDB, Redis, the Redis Cluster and the MongoDB stand-in) as the tests
# do (scripts/services.sh;
# AUTHPORT_SERVICES overrides the list), unless
# AUTHPORT_SERVICES=none: then only the AUTHPORT_*_URL variables already set
# are used. A backend whose service is unreachable is skipped, with the reason.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${TMPDIR:-/tmp}/authport-bench
(cd "$root/tools/bench" && GOWORK=off GOFLAGS="${GOFLAGS:--buildvcs=false}" go build -o "$bin" .)
if [ "${AUTHPORT_SERVICES:-}" != none ]; then
	exports=$(AUTHPORT_SERVICES="${AUTHPORT_SERVICES:-$("$bin" -services)}" "$root/scripts/services.sh")
	eval "$exports"
fi
cd "$root/tools/bench"
if [ ! -d authjs/node_modules ] && command -v npm >/dev/null; then
	(cd authjs && npm ci --no-audit --no-fund >&2) || echo "bench: npm ci in tools/bench/authjs failed: no Auth.js column" >&2
fi
exec "$bin" "$@"
