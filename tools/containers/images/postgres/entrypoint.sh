#!/bin/sh
# Initialises a cluster on first start, as the official postgres image does:
# superuser POSTGRES_USER (default postgres), database POSTGRES_DB (default
# the user's name), trust authentication (POSTGRES_PASSWORD is accepted and
# not checked), listening on every address. Then runs the server in the
# foreground with the arguments given (the first, "postgres", is dropped).
# Unlike the official image it starts the server once, so "database system
# is ready to accept connections" is logged once, not twice.
set -eu
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	initdb --username="$user" --auth=trust --no-sync -D "$PGDATA" >/dev/null
	echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
	echo "host all all all trust" >>"$PGDATA/pg_hba.conf"
	if [ "$db" != postgres ]; then
		echo "CREATE DATABASE \"$db\"" | postgres --single -D "$PGDATA" postgres >/dev/null
	fi
fi
if [ "${1:-}" = postgres ]; then
	shift
fi
exec postgres -D "$PGDATA" "$@"
