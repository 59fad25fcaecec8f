#!/bin/sh
# Runs redis-server in the foreground on every address, without protected
# mode (the container's published port is the only way in) and without
# persistence. Extra arguments go to redis-server; a leading "redis-server"
# is dropped.
set -eu
if [ "${1:-}" = redis-server ]; then
	shift
fi
exec redis-server --bind 0.0.0.0 --protected-mode no --save '' --appendonly no "$@"
