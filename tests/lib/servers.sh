# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Real servers from Debian for the tests, on loopback in the test's own
# directory, ended by kmond.sh's cleanup (their pids are in STARTED_PIDS).
#   start_redis PORT      sets REDIS_PID once Redis answers a PING
#   start_postgres PORT [SETTING...]
#                         sets PG_PID once PostgreSQL accepts connections
#                         (trust auth, user postgres, log $WORK/postgres.log;
#                         each SETTING, name=value, one more -c)
#   start_mariadb PORT [OPTION...]  sets MARIADB_PID once MariaDB accepts
#                         connections (user root, no grants checked;
#                         OPTIONs go to mariadbd)

start_redis() {
	local i
	redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
	REDIS_PID=$!
	STARTED_PIDS+=($REDIS_PID)
	for ((i = 0; i < 50; i++)); do
		redis-cli -p "$1" ping >/dev/null 2>&1 && return
		sleep 0.1
	done
	fail "redis did not start: $(tail -3 "$WORK/redis.log")"
}

start_postgres() {
	local i bin settings=
	for i in "${@:2}"; do settings+=" -c $i"; done
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -x "$bin/initdb" ] || fail "no PostgreSQL server (scripts/install-deps.sh)"
	chmod 755 "$WORK" # postgres runs as its own user under it
	mkdir -p "$WORK/pg" && chown postgres "$WORK/pg"
	su postgres -s /bin/sh -c "$bin/initdb -D $WORK/pg/data -A trust -U postgres" \
		>"$WORK/initdb.log" 2>&1 || fail "initdb: $(tail -3 "$WORK/initdb.log")"
	su postgres -s /bin/sh -c "exec $bin/postgres -D $WORK/pg/data -p $1 -k $WORK/pg -c listen_addresses=127.0.0.1$settings" \
		>"$WORK/postgres.log" 2>&1 &
	PG_PID=$!
	STARTED_PIDS+=($PG_PID)
	for ((i = 0; i < 150; i++)); do
		pg_isready -q -h 127.0.0.1 -p "$1" && return
		sleep 0.2
	done
	fail "postgres did not start: $(tail -3 "$WORK/postgres.log")"
}

start_mariadb() {
	local i
	mariadb-install-db --no-defaults --datadir="$WORK/my" --user=root \
		--auth-root-authentication-method=normal >"$WORK/mariadb-install.log" 2>&1 ||
		fail "mariadb-install-db: $(tail -3 "$WORK/mariadb-install.log")"
	mariadbd --no-defaults --datadir="$WORK/my" --user=root --port="$1" \
		--bind-address=127.0.0.1 --socket="$WORK/my.sock" --skip-grant-tables \
		--pid-file="$WORK/my.pid" "${@:2}" >"$WORK/mariadb.log" 2>&1 &
	MARIADB_PID=$!
	STARTED_PIDS+=($MARIADB_PID)
	for ((i = 0; i < 150; i++)); do
		mariadb-admin -h 127.0.0.1 -P "$1" -u root ping >/dev/null 2>&1 && return
		sleep 0.2
	done
	fail "mariadb did not start: $(tail -3 "$WORK/mariadb.log")"
}
