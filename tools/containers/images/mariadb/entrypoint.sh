#!/bin/sh
# Initialises the data directory on first start and runs mariadbd in the
# foreground on every address, with what the official mariadb image's
# variables ask for: root@'%' with MARIADB_ROOT_PASSWORD (empty when unset),
# database MARIADB_DATABASE, and user MARIADB_USER/MARIADB_PASSWORD with
# every privilege on it. Extra arguments go to mariadbd.
set -eu
if [ ! -d /var/lib/mysql/mysql ]; then
	mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db \
		--auth-root-authentication-method=normal >/dev/null
fi
init=/run/mysqld/init.sql
{
	echo "CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '${MARIADB_ROOT_PASSWORD:-}';"
	echo "GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;"
	if [ -n "${MARIADB_DATABASE:-}" ]; then
		echo "CREATE DATABASE IF NOT EXISTS \`$MARIADB_DATABASE\`;"
		if [ -n "${MARIADB_USER:-}" ]; then
			echo "CREATE USER IF NOT EXISTS '$MARIADB_USER'@'%' IDENTIFIED BY '${MARIADB_PASSWORD:-}';"
			echo "GRANT ALL PRIVILEGES ON \`$MARIADB_DATABASE\`.* TO '$MARIADB_USER'@'%';"
		fi
	fi
} >"$init"
exec mariadbd --user=mysql --datadir=/var/lib/mysql --bind-address=0.0.0.0 --port=3306 \
	--skip-name-resolve --init-file="$init" "$@"
