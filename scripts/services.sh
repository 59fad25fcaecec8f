#!/usr/bin/env bash
# services.sh — make every database authport's tests need reachable on this
# machine, and print the `export` lines that point the tests at them:
#
#   eval "$(scripts/services.sh)"
#
# Only the export lines go to stdout; progress and errors go to stderr. Safe to
# run repeatedly: whatever already answers is reused, whatever is down is
# started, whatever is missing is installed from Debian's packages (as root,
# or through `sudo -n` for apt-get alone).
#
# Environment:
#   AUTHPORT_SERVICES   which services to provide, space-separated (default:
#                       "postgres mysql redis redis-cluster redis-sentinel
#                       postgres-ha mongodb dex chromium containers"; "none"
#                       for none)
#   AUTHPORT_POSTGRES_URL, AUTHPORT_MYSQL_URL, AUTHPORT_REDIS_URL,
#   AUTHPORT_REDIS_CLUSTER_URL, AUTHPORT_REDIS_SENTINEL_URL,
#   AUTHPORT_POSTGRES_HA_URL, AUTHPORT_MONGODB_URL, AUTHPORT_DEX_BIN,
#   AUTHPORT_CHROMIUM_BIN
#                       if already set, that service is left alone and the
#                       value is printed back unchanged
#   AUTHPORT_REDIS_CLUSTER_PORTS  the cluster's three ports (default "7001 7002 7003")
#   AUTHPORT_MONGODB_PORT         first port tried for the stand-in (default 27018)
#   AUTHPORT_SERVICES_TIMEOUT     seconds to wait for each service (default 60)
#
# PostgreSQL, MariaDB and Redis are the machine's own servers on their usual
# ports. The Redis Cluster (three masters, no replicas) lives in
# $TMPDIR/authport-redis-cluster. Redis Sentinel (a master and a replica on
# 6390-6391, sentinels on 26390-26392) and the highly available PostgreSQL
# (a pg_auto_failover monitor, primary and synchronous standby on 5440-5442)
# are started by tools/ha, in $TMPDIR/authport-redis-sentinel and
# $TMPDIR/authport-pg-ha; its binary's path is printed as AUTHPORT_HA_BIN,
# for the fault suite, which starts private ones to kill. MongoDB is tools/mongostandin (FerretDB on
# SQLite), built into ${XDG_CACHE_HOME:-$HOME/.cache}/authport and run with its
# data in $TMPDIR/authport-mongostandin-PORT; the binary's path is printed as
# AUTHPORT_MONGOSTANDIN_BIN too, for tests that start stand-ins of their own
# (tools/faults). dex (the OpenID provider of the sign-in tests) is only
# built, from tools/dex, into the same cache: the tests start their own dex
# servers from AUTHPORT_DEX_BIN. Logs of what this script starts and builds
# are in $TMPDIR/authport-services. Chromium (the browser of the end-to-end
# tests in examples/demo) is Debian's chromium, installed when
# /usr/bin/chromium is missing; the tests start their own headless browsers
# from AUTHPORT_CHROMIUM_BIN. "containers" readies the container path of the
# conformance suite (conformance/backends) with tools/containers: podman's
# Docker-compatible API on /run/podman/podman.sock and the database images,
# built from Debian's packages (see tools/containers/main.go), in the
# background when missing (the tests wait for AUTHPORT_IMAGES_STATUS to say
# "ready"; ~/.cache/authport/containers/background.log); it is skipped
# where DOCKER_HOST is set or a Docker engine's socket exists, and
# testcontainers-go uses that engine with the official images.
set -euo pipefail

started=$SECONDS
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=${TMPDIR:-/tmp}
logdir=$tmp/authport-services
services=${AUTHPORT_SERVICES:-postgres mysql redis redis-cluster redis-sentinel postgres-ha mongodb dex chromium containers}
timeout_s=${AUTHPORT_SERVICES_TIMEOUT:-60}
read -r -a cluster_ports <<<"${AUTHPORT_REDIS_CLUSTER_PORTS:-7001 7002 7003}"
mongo_port=${AUTHPORT_MONGODB_PORT:-27018}

# Keep the real stdout on fd 3 for the export lines; everything else,
# including any chatter from the tools we call, goes to stderr.
exec 3>&1 1>&2

log() { printf 'services: %s\n' "$*" >&2; }
die() {
	printf 'services: ERROR: %s\n' "$*" >&2
	exit 1
}

mkdir -p "$logdir"

# locked SERVICE CMD...: run CMD holding $logdir/SERVICE.lock (on fd 9), so
# that concurrent runs never set up the same service at once, while a run
# busy building the stand-in does not hold up another that wants PostgreSQL.
locked() {
	local service=$1
	shift
	exec 9>"$logdir/$service.lock"
	flock -w 900 9 || die "$service: another scripts/services.sh has held $logdir/$service.lock for 15 minutes; is it stuck?"
	"$@"
	exec 9>&-
}

# quiet LOG CMD...: run CMD with all its output appended to $logdir/LOG.log.
# Its stdio and our fds 3 (stdout) and 9 (lock) are not inherited, so a daemon
# it leaves behind holds neither the caller's pipes nor a lock.
quiet() {
	local name=$1
	shift
	"$@" </dev/null >>"$logdir/$name.log" 2>&1 3>&- 9>&-
}

# die_log LOG MESSAGE: fail, showing the end of $logdir/LOG.log.
die_log() {
	local file=$logdir/$1.log
	if [[ -s $file ]]; then
		printf 'services: last lines of %s:\n' "$file" >&2
		tail -n 15 "$file" | sed 's/^/    /' >&2
	fi
	die "$2"
}

# wait_for CMD...: retry CMD until it succeeds or $timeout_s seconds have
# passed. Each try of a program is bounded to 5 s; the functions passed here
# bound their own commands.
wait_for() {
	local deadline=$((SECONDS + timeout_s)) bound=(timeout 5)
	if [[ $(type -t "$1") == function ]]; then
		bound=()
	fi
	until "${bound[@]}" "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			return 1
		fi
		sleep 0.5
	done
}

# need_root WHAT: the commands that start or set up the system's database
# servers need root.
need_root() {
	((EUID == 0)) || die "$1 needs root: run this script as root, or set its AUTHPORT_*_URL to a server you run"
}

apt_updated=
# apt_install PACKAGE...: install Debian packages, running `apt-get update`
# once per run first.
apt_install() {
	local sudo=()
	if ((EUID != 0)); then
		sudo=(sudo -n)
	fi
	command -v apt-get >/dev/null || die "cannot install $*: no apt-get on this machine; install it yourself"
	if [[ -z $apt_updated ]]; then
		log "apt-get update"
		quiet apt timeout 600 "${sudo[@]}" apt-get update -q ||
			die_log apt "apt-get update failed (needs root or passwordless sudo, and the Debian mirrors)"
		apt_updated=1
	fi
	log "installing $* from Debian's packages"
	quiet apt timeout 900 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q -o DPkg::Lock::Timeout=120 --no-install-recommends "$@" ||
		die_log apt "apt-get install $* failed"
}

# export_line NAME VALUE [NOTE]: queue `export NAME='VALUE'` for stdout.
exports=()
export_line() {
	log "ready: $1=$2${3:+ ($3)}"
	exports+=("export $1='${2//\'/\'\\\'\'}'")
}

# wanted SERVICE: whether AUTHPORT_SERVICES names SERVICE.
wanted() { [[ " $services " == *" $1 "* ]]; }

# given VAR SERVICE: if the caller set VAR, pass it through and return 0.
given() {
	if [[ -n ${!1:-} ]]; then
		export_line "$1" "${!1}" "set by the caller; $2 left alone"
		return 0
	fi
	return 1
}

### PostgreSQL ################################################################

pg_url='postgres://postgres@127.0.0.1:5432/test?sslmode=disable'

pg_works() { timeout 5 psql "$pg_url" -Atqc 'select 1' >/dev/null 2>&1; }

# pg_setup VERSION: trust auth on loopback, database `test`, and roles
# postgres and root (so plain `psql` as root works too).
pg_setup() {
	local ver=$1 hba=/etc/postgresql/$1/main/pg_hba.conf line
	log "postgres: setting up trust auth on loopback and database test"
	for line in 'host all all ::1/128 trust' 'host all all 127.0.0.1/32 trust'; do
		# First matching line wins in pg_hba.conf, so put ours on top.
		grep -qxF "$line" "$hba" || sed -i "1i $line" "$hba"
	done
	quiet postgres pg_ctlcluster --skip-systemctl-redirect "$ver" main reload ||
		die_log postgres "could not reload PostgreSQL $ver/main"
	local sql=(runuser -u postgres -- psql -X -q -d postgres -v ON_ERROR_STOP=1)
	quiet postgres "${sql[@]}" -c "do \$\$ begin
		if not exists (select from pg_roles where rolname = 'root') then create role root superuser login; end if;
	end \$\$" || die_log postgres "could not create PostgreSQL role root"
	if [[ -z $(runuser -u postgres -- psql -X -Atq -d postgres -c "select 1 from pg_database where datname = 'test'") ]]; then
		quiet postgres runuser -u postgres -- createdb test || die_log postgres "could not create PostgreSQL database test"
	fi
}

ensure_postgres() {
	given AUTHPORT_POSTGRES_URL postgres && return
	if ! pg_works; then
		need_root "starting PostgreSQL"
		if ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
			apt_install postgresql
		fi
		local ver
		ver=$(find /usr/lib/postgresql -path '*/bin/postgres' | sed 's|^/usr/lib/postgresql/||; s|/.*||' | sort -V | tail -n 1)
		if [[ ! -d /etc/postgresql/$ver/main ]]; then
			log "postgres: creating cluster $ver/main"
			quiet postgres pg_createcluster "$ver" main || die_log postgres "pg_createcluster $ver main failed"
		fi
		if ! timeout 5 pg_isready -q -h 127.0.0.1 -p 5432; then
			log "postgres: starting $ver/main"
			# A failure here (e.g. "already running" while it recovers) is
			# judged by the wait below.
			quiet postgres pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
		fi
		wait_for pg_isready -q -h 127.0.0.1 -p 5432 ||
			die_log postgres "PostgreSQL $ver/main did not accept connections on 127.0.0.1:5432 within ${timeout_s}s (see /var/log/postgresql/postgresql-$ver-main.log)"
		pg_works || pg_setup "$ver"
		pg_works || die "PostgreSQL answers on 127.0.0.1:5432 but 'psql $pg_url' fails; check pg_hba.conf for trust auth on 127.0.0.1"
	fi
	export_line AUTHPORT_POSTGRES_URL "$pg_url"
}

### MariaDB ###################################################################

my_works() {
	timeout 5 mariadb --protocol=TCP -h 127.0.0.1 -P 3306 -u root -D test -e 'select 1' >/dev/null 2>&1
}

# my_alive: the server answers, on its socket or on TCP. `mariadb-admin ping`
# succeeds even when the login is refused, but not with "host not allowed",
# which is what a fresh install says to TCP clients.
my_alive() {
	timeout 5 mariadb-admin ping >/dev/null 2>&1 ||
		timeout 5 mariadb-admin --protocol=TCP -h 127.0.0.1 -P 3306 ping >/dev/null 2>&1
}

# my_setup: database `test`, and root over TCP without a password. Runs over
# the Unix socket, where Debian's root@localhost authenticates by unix_socket.
my_setup() {
	log "mysql: setting up root over TCP without password and database test"
	quiet mysql mariadb -u root -e "
		CREATE DATABASE IF NOT EXISTS test;
		CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
		GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
		ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('');
		FLUSH PRIVILEGES;" || die_log mysql "could not set up MariaDB's root user and database test"
}

ensure_mysql() {
	given AUTHPORT_MYSQL_URL mysql && return
	if ! my_works; then
		need_root "starting MariaDB"
		if [[ ! -x /usr/sbin/mariadbd ]]; then
			apt_install mariadb-server
		fi
		if [[ ! -d /var/lib/mysql/mysql ]]; then
			log "mysql: initialising /var/lib/mysql"
			quiet mysql env -u TMPDIR mariadb-install-db --user=mysql || die_log mysql "mariadb-install-db failed"
		fi
		# systemd would create the socket directory; start-stop-daemon does not.
		# The server runs as user mysql, which may not write to our $TMPDIR:
		# it gets its own default, /tmp.
		install -d -o mysql -g mysql /run/mysqld
		if ! my_alive; then
			log "mysql: starting mariadbd"
			quiet mysql env -u TMPDIR start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd ||
				die_log mysql "start-stop-daemon could not start /usr/sbin/mariadbd"
		fi
		wait_for my_alive ||
			die "MariaDB did not answer on 127.0.0.1:3306 within ${timeout_s}s (see /var/log/mysql/error.log or 'journalctl -u mariadb')"
		my_works || my_setup
		my_works || die "MariaDB answers on 127.0.0.1:3306 but root without password cannot use database test over TCP"
	fi
	export_line AUTHPORT_MYSQL_URL 'root@tcp(127.0.0.1:3306)/test?parseTime=true'
}

### Redis #####################################################################

redis_pong() { [[ $(timeout 5 redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null) == PONG ]]; }

ensure_redis_installed() {
	if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
		apt_install redis-server
	fi
}

ensure_redis() {
	given AUTHPORT_REDIS_URL redis && return
	if ! redis_pong 6379; then
		need_root "starting Redis"
		ensure_redis_installed
		mkdir -p /var/lib/redis /var/log/redis
		log "redis: starting redis-server on 6379"
		quiet redis redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
			--dir /var/lib/redis --logfile /var/log/redis/ci.log || die_log redis "redis-server did not start"
		wait_for redis_pong 6379 ||
			die "Redis did not answer on 127.0.0.1:6379 within ${timeout_s}s (see /var/log/redis/ci.log)"
	fi
	export_line AUTHPORT_REDIS_URL 'redis://127.0.0.1:6379/0'
}

### Redis Cluster #############################################################

cluster_dir=$tmp/authport-redis-cluster

# cluster_node_ok PORT: the node on PORT sees a healthy cluster with every slot served.
cluster_node_ok() {
	local info
	info=$(timeout 5 redis-cli -h 127.0.0.1 -p "$1" cluster info 2>/dev/null) || return 1
	[[ $info == *cluster_state:ok* && $info == *cluster_slots_ok:16384* ]]
}

# cluster_healthy: every node is ok, and they are one cluster (not three
# single-node clusters that each serve all slots).
cluster_healthy() {
	local port id nodes
	for port in "${cluster_ports[@]}"; do
		cluster_node_ok "$port" || return 1
	done
	nodes=$(timeout 5 redis-cli -h 127.0.0.1 -p "${cluster_ports[0]}" cluster nodes 2>/dev/null) || return 1
	for port in "${cluster_ports[@]}"; do
		id=$(timeout 5 redis-cli -h 127.0.0.1 -p "$port" cluster myid 2>/dev/null) || return 1
		[[ -n $id && $nodes == *"$id 127.0.0.1:$port@"* ]] || return 1
	done
}

port_free() { ! timeout 2 bash -c "exec 4<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

create_cluster() {
	local port addrs=()
	for port in "${cluster_ports[@]}"; do
		if redis_pong "$port"; then
			log "redis-cluster: shutting down the node on $port"
			timeout 5 redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || true
		fi
		wait_for port_free "$port" ||
			die "port $port is still in use by something that is not a Redis we could shut down; free it or set AUTHPORT_REDIS_CLUSTER_PORTS"
	done
	rm -rf "$cluster_dir"
	mkdir -p "$cluster_dir"
	for port in "${cluster_ports[@]}"; do
		quiet redis-cluster redis-server --cluster-enabled yes --cluster-config-file "$cluster_dir/nodes-$port.conf" \
			--port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
			--dir "$cluster_dir" --logfile "$cluster_dir/redis-$port.log" ||
			die_log redis-cluster "redis-server did not start on port $port"
		addrs+=("127.0.0.1:$port")
	done
	for port in "${cluster_ports[@]}"; do
		wait_for redis_pong "$port" ||
			die "Redis Cluster node on port $port did not answer within ${timeout_s}s (see $cluster_dir/redis-$port.log)"
	done
	quiet redis-cluster timeout 60 redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes ||
		die_log redis-cluster "redis-cli --cluster create failed"
}

ensure_redis_cluster() {
	given AUTHPORT_REDIS_CLUSTER_URL redis-cluster && return
	((${#cluster_ports[@]} == 3)) || die "AUTHPORT_REDIS_CLUSTER_PORTS must name three ports, got '${cluster_ports[*]}'"
	ensure_redis_installed
	if cluster_healthy; then
		log "redis-cluster: reusing the healthy cluster on ${cluster_ports[*]}"
	else
		log "redis-cluster: no healthy cluster on ${cluster_ports[*]}: creating one (3 masters)"
		create_cluster
		wait_for cluster_healthy ||
			die "Redis Cluster on ${cluster_ports[*]} did not reach cluster_state:ok within ${timeout_s}s (see $cluster_dir/redis-*.log)"
	fi
	local IFS=,
	export_line AUTHPORT_REDIS_CLUSTER_URL "${cluster_ports[*]/#/127.0.0.1:}"
}

### Tools built from source ####################################################

# Binaries built from the tools/ modules live in one cache directory, one file
# per build, named after a hash of what went into it.
tool_cache=${XDG_CACHE_HOME:-$HOME/.cache}/authport

# tool_binary NAME TAGS PACKAGE: print the path of the binary built from the
# module tools/NAME (PACKAGE is `.` for the module's own main package, or a
# tool of its go.mod), building it first when the Go version, the build tags,
# or the module's go.mod, go.sum, top-level Go sources or images/ (the files
# tools/containers embeds) changed since the
# cached build. The build log is $logdir/NAME-build.log; older builds of NAME
# are removed.
tool_binary() {
	local name=$1 tags=$2 pkg=$3
	local src=$repo/tools/$name hash bin f
	export GOWORK=off # a tool is its own module, whatever go.work says
	command -v go >/dev/null || die "$name: building tools/$name needs Go on PATH (https://go.dev/dl/)"
	hash=$(
		cd "$src"
		{
			go env GOVERSION
			echo "$tags"
			for f in go.mod go.sum $(find . -maxdepth 1 -name '*.go' ! -name '*_test.go' | sort) \
				$(find . -path './images/*' -type f | sort); do
				[[ -f $f ]] || continue # a module without requirements has no go.sum
				echo "== $f"
				cat "$f"
			done
		} | sha256sum | cut -c1-16
	)
	bin=$tool_cache/$name-$hash
	if [[ ! -x $bin ]]; then
		log "$name: building tools/$name (the first build takes a few minutes)"
		mkdir -p "$tool_cache"
		# Build beside the target and rename, so a half-written binary is never used.
		(cd "$src" && quiet "$name-build" \
			timeout 1200 go build ${tags:+-tags "$tags"} -o "$bin.tmp.$$" "$pkg") ||
			die_log "$name-build" "go build of tools/$name failed"
		mv -f "$bin.tmp.$$" "$bin"
		find "$tool_cache" -maxdepth 1 -name "$name-*" ! -name '*.tmp.*' ! -name "$name-$hash" -delete
	fi
	echo "$bin"
}

### MongoDB stand-in ##########################################################

# mongo_binary: print the stand-in's binary path, building it if needed. The
# build tag leaves FerretDB's PostgreSQL backend out: a smaller, faster build.
mongo_binary() { tool_binary mongostandin ferretdb_no_postgresql .; }

ensure_mongodb() {
	local bin port pidfile old_pid old_bin
	# The binary is exported too, for tests that start private stand-ins of
	# their own (tools/faults), even when the server comes from the caller.
	bin=$(mongo_binary)
	export_line AUTHPORT_MONGOSTANDIN_BIN "$bin"
	given AUTHPORT_MONGODB_URL mongodb && return

	# Reuse a MongoDB server that answers on the first port; else start on the
	# first free port, skipping ports something else holds.
	for ((port = mongo_port; port < mongo_port + 10; port++)); do
		# A stand-in this script started from an older build is replaced.
		pidfile=$logdir/mongostandin-$port.pid
		if [[ -f $pidfile ]] && read -r old_pid old_bin <"$pidfile" &&
			[[ $old_bin != "$bin" && $(tr '\0' ' ' 2>/dev/null <"/proc/$old_pid/cmdline") == "$old_bin "* ]]; then
			log "mongodb: stopping the stand-in from an older build on 127.0.0.1:$port (pid $old_pid)"
			kill "$old_pid"
			wait_for port_free "$port" || die "the old stand-in (pid $old_pid) did not stop"
		fi
		if timeout 5 "$bin" -ping -listen "127.0.0.1:$port" 2>/dev/null; then
			log "mongodb: reusing the server on 127.0.0.1:$port"
			break
		fi
		if port_free "$port"; then
			log "mongodb: starting the stand-in on 127.0.0.1:$port"
			rm -rf "$tmp/authport-mongostandin-$port"
			setsid "$bin" -listen "127.0.0.1:$port" -data "$tmp/authport-mongostandin-$port" \
				</dev/null >>"$logdir/mongostandin-$port.log" 2>&1 3>&- 9>&- &
			echo "$! $bin" >"$pidfile"
			wait_for "$bin" -ping -listen "127.0.0.1:$port" ||
				die_log "mongostandin-$port" "the MongoDB stand-in did not answer on 127.0.0.1:$port within ${timeout_s}s"
			break
		fi
		log "mongodb: port $port is taken by something else; trying the next"
	done
	((port < mongo_port + 10)) || die "no free port for the MongoDB stand-in in $mongo_port-$((mongo_port + 9))"
	export_line AUTHPORT_MONGODB_URL "mongodb://127.0.0.1:$port/"
}

### dex #######################################################################

# ensure_dex: build dex, the OpenID provider of the sign-in tests, from the
# pins in tools/dex. Nothing is started: each test runs a dex of its own
# (conformance/provision.Dex), configured with its clients and users.
ensure_dex() {
	given AUTHPORT_DEX_BIN dex && return
	local bin
	bin=$(tool_binary dex '' github.com/dexidp/dex/cmd/dex)
	export_line AUTHPORT_DEX_BIN "$bin"
}

### Chromium ##################################################################

# ensure_chromium: Debian's chromium, the browser of the end-to-end tests.
# Nothing is started: each test runs a headless browser of its own
# (conformance/provision.Chromium).
ensure_chromium() {
	given AUTHPORT_CHROMIUM_BIN chromium && return
	local bin=/usr/bin/chromium
	if [[ ! -x $bin ]]; then
		apt_install chromium
	fi
	[[ -x $bin ]] || die "chromium: apt-get installed chromium but $bin is missing; set AUTHPORT_CHROMIUM_BIN to a Chromium binary"
	export_line AUTHPORT_CHROMIUM_BIN "$bin"
}

### High availability: Redis Sentinel, PostgreSQL HA ##########################

ha_bin=
# ensure_ha_bin: build tools/ha and export its path once (the fault suite
# starts private deployments with it, even when the caller gave the URLs).
ensure_ha_bin() {
	if [[ -z $ha_bin ]]; then
		ha_bin=$(tool_binary ha '' .)
		export_line AUTHPORT_HA_BIN "$ha_bin"
	fi
}

# ha_service COMMAND VAR: run tools/ha COMMAND (sentinel or pg), which
# starts the deployment or reuses a healthy one and prints VAR=VALUE.
ha_service() {
	local out
	out=$(quiet_err "ha-$1" timeout 600 "$ha_bin" "$1") || die_log "ha-$1" "tools/ha $1 failed"
	[[ $out == "$2="* ]] || die "tools/ha $1 printed '$out', not $2=..."
	export_line "$2" "${out#*=}"
}

# quiet_err LOG CMD...: like quiet, but CMD's stdout is kept.
quiet_err() {
	local name=$1
	shift
	"$@" </dev/null 2>>"$logdir/$name.log" 3>&- 9>&-
}

ensure_redis_sentinel() {
	ensure_ha_bin
	given AUTHPORT_REDIS_SENTINEL_URL redis-sentinel && return
	ensure_redis_installed
	ha_service sentinel AUTHPORT_REDIS_SENTINEL_URL
}

ensure_postgres_ha() {
	ensure_ha_bin
	given AUTHPORT_POSTGRES_HA_URL postgres-ha && return
	need_root "running PostgreSQL HA (pg_auto_failover, as user postgres)"
	if ! command -v pg_autoctl >/dev/null; then
		local ver
		ver=$(find /usr/lib/postgresql -path '*/bin/postgres' 2>/dev/null | sed 's|^/usr/lib/postgresql/||; s|/.*||' | sort -V | tail -n 1)
		apt_install "postgresql-${ver:-15}-auto-failover"
	fi
	ha_service pg AUTHPORT_POSTGRES_HA_URL
}

### Containers ################################################################

# ensure_containers: podman's API service and the images of the container
# path, from tools/containers, which prints NAME=VALUE lines (DOCKER_HOST,
# TESTCONTAINERS_*, AUTHPORT_*_IMAGE, AUTHPORT_IMAGES_STATUS) at once, and
# builds what is missing in the background.
ensure_containers() {
	local podman_host=unix:///run/podman/podman.sock
	# A DOCKER_HOST of the caller's is left alone; ours (from an earlier
	# run) is checked again, and the images with it.
	if [[ ${DOCKER_HOST:-$podman_host} != "$podman_host" ]]; then
		given DOCKER_HOST containers
		return
	fi
	if [[ -z ${DOCKER_HOST:-} && -S /var/run/docker.sock ]]; then
		log "containers: a Docker engine's socket is at /var/run/docker.sock; testcontainers-go uses it"
		return
	fi
	local bin standin out line
	bin=$(tool_binary containers '' .)
	standin=$(mongo_binary)
	out=$(AUTHPORT_MONGOSTANDIN_BIN=$standin timeout 1800 "$bin" -socket "${podman_host#unix://}" 3>&- 9>&-) ||
		die "containers: tools/containers failed (its output is above)"
	while IFS= read -r line; do
		if [[ $line == *=* ]]; then
			export_line "${line%%=*}" "${line#*=}"
		fi
	done <<<"$out"
}

### main ######################################################################

for s in $services; do
	case $s in
	postgres | mysql | redis | redis-cluster | redis-sentinel | postgres-ha | mongodb | dex | chromium | containers | none) ;;
	*) die "unknown service '$s' in AUTHPORT_SERVICES (known: postgres mysql redis redis-cluster redis-sentinel postgres-ha mongodb dex chromium containers, or none)" ;;
	esac
done

wanted postgres && locked postgres ensure_postgres
wanted mysql && locked mysql ensure_mysql
wanted redis && locked redis ensure_redis
wanted redis-cluster && locked redis-cluster ensure_redis_cluster
wanted redis-sentinel && locked redis-sentinel ensure_redis_sentinel
wanted postgres-ha && locked postgres-ha ensure_postgres_ha
wanted mongodb && locked mongodb ensure_mongodb
wanted dex && locked dex ensure_dex
wanted chromium && locked chromium ensure_chromium
wanted containers && locked containers ensure_containers

log "ready in $((SECONDS - started))s"
if ((${#exports[@]})); then
	printf '%s\n' "${exports[@]}" >&3
fi
