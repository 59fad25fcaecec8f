#!/usr/bin/env bash
# release.sh — release every module of the repository at one version.
#
#   scripts/release.sh VERSION        e.g. v0.2.0: check, set, commit, tag
#   scripts/release.sh -n VERSION     only check and print what would happen
#
# It checks that the work tree is clean and that no module is tagged at or
# above VERSION, rewrites every in-repo requirement to VERSION, checks that
# `go mod tidy` would change nothing, runs the consumer check (every adapter
# used from a module outside the repository, through a local module proxy
# made of this tree; it needs the test databases: run it after
# `eval "$(scripts/services.sh)"`), commits the go.mod changes, and tags
# every module in dependency order (core/VERSION first). It pushes nothing;
# it prints the push command. See CONTRIBUTING.md, "Releasing".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ $# -eq 0 ]; then
	sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
fi
cd "$root/tools/release"
exec env GOWORK=off go run . -C "$root" tag "$@"
