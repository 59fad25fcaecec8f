#!/usr/bin/env bash
# ci.sh COMMAND [ARGS]: build tools/ci (the logic of these scripts, in Go;
# standard library only) into ${XDG_CACHE_HOME:-$HOME/.cache}/authport,
# once per change of its sources or of Go, and run it. See tools/ci/main.go.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=$repo/tools/ci
command -v go >/dev/null || { echo "scripts/ci.sh: the scripts need Go on PATH (https://go.dev/dl/)" >&2; exit 1; }
cache=${XDG_CACHE_HOME:-$HOME/.cache}/authport
hash=$(cd "$src" && { go env GOVERSION && cat go.mod ./*.go; } | sha256sum | cut -c1-16)
bin=$cache/ci-$hash
if [[ ! -x $bin ]]; then
	mkdir -p "$cache"
	(cd "$src" && GOWORK=off GOFLAGS=-buildvcs=false go build -o "$bin.tmp.$$" .) >&2
	mv -f "$bin.tmp.$$" "$bin"
	# Builds unused for a day go (another tree may be using a newer one).
	find "$cache" -maxdepth 1 -name 'ci-*' ! -name "ci-$hash" -mtime +0 -delete
fi
touch "$bin"
AUTHPORT_REPO=$repo exec "$bin" "$@"
