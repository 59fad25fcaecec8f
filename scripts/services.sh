#!/usr/bin/env bash
# services.sh — make every database authport's tests need reachable on this
# machine, and print the `export` lines that point the tests at them:
#
#   eval "$(scripts/services.sh)"
#   eval "$(scripts/services.sh -setup-host)"   also configure the system's servers
#
# Only the export lines go to stdout. Whatever already answers is reused,
# whatever is down is started, whatever is missing is installed from
# Debian's packages. The system's PostgreSQL and MariaDB are reconfigured
# (trust auth on loopback in pg_hba.conf, root over TCP without a password,
# database test) only with -setup-host or AUTHPORT_SETUP_HOST=1. The default
# URLs, the services (AUTHPORT_SERVICES) and the other variables are
# described in tools/ci (services.go, urls.go) and CONTRIBUTING.md.
exec "$(dirname "${BASH_SOURCE[0]}")/ci.sh" services "$@"
