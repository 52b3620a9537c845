#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Outcomes of the stores' protocols (docs/design/outcomes.md), both ends
# monitored: Debian's clients, from a caller kmond selects, send requests
# that fail and requests that succeed to Debian's servers on random ports.
# Every request's status and error is exact on both sides:
# - redis-cli (two sessions on stdin; it first sends COMMAND DOCS): error
#   replies WRONGTYPE and ERR (an unknown command, INCR of a string),
#   error true; the other replies no status, error false;
# - psql: a unique violation (SQLSTATE 23505) and a syntax error (42601),
#   error true; the startup exchange and good queries, error false;
# - the mariadb client: ERR packets 1062, 1064 and 1146, error true; its
#   login and good queries, error false;
# - memcached (a python client): STORED, VALUE, END (a miss), NOT_FOUND
#   (deleting a missing key), DELETED, error false; ERROR (an unknown
#   command) and CLIENT_ERROR (incr of a string), error true;
# - dnsmasq over TCP (dig +tcp): NOERROR and NXDOMAIN, error false;
#   REFUSED (a name it has no upstream for), error true.
# The servers' own logs and counters confirm what the clients sent; the
# topology and load records' counts by outcome are the sums over the
# records.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/servers.sh"
source "$(dirname "$0")/../lib/caller.sh"

need_protocols
CHECK="python3 $(dirname "$0")/../lib/outcome_check.py"
P=$(test_port 5)
REDIS=$P PG=$((P + 1)) MYSQL=$((P + 2)) MC=$((P + 3)) DNS=$((P + 4))

# --- servers (before kmond: the provider finds them by port) ---
start_redis $REDIS
start_postgres $PG log_line_prefix=%e: # each ERROR line with its SQLSTATE
start_mariadb $MYSQL
memcached -p $MC -l 127.0.0.1 -U 0 -u root >"$WORK/memcached.log" 2>&1 &
STARTED_PIDS+=($!)
dnsmasq -k -p $DNS --listen-address=127.0.0.1 --bind-interfaces \
	--no-resolv --no-hosts --address=/svc.test/10.1.2.3 --address=/gone.test/ \
	--pid-file="$WORK/dnsmasq.pid" --user=root >"$WORK/dnsmasq.log" 2>&1 &
STARTED_PIDS+=($!)
wait_port $MC || fail "memcached did not start: $(cat "$WORK/memcached.log")"
wait_port $DNS || fail "dnsmasq did not start: $(cat "$WORK/dnsmasq.log")"
redis-cli -p $REDIS config resetstat >/dev/null || fail "redis resetstat"
start_caller

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: cache, match: { port: $REDIS } }
  - { name: db, match: { port: $PG } }
  - { name: maria, match: { port: $MYSQL } }
  - { name: memc, match: { port: $MC } }
  - { name: dns, match: { port: $DNS } }
  - { name: callers, match: { pid: $CALLER_PID } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 1.1 # two intervals: the servers and the caller are selected

# --- clients, each with the outcomes it must give (EXPECT lines) ---
expect() { # PROTOCOL LINE...
	printf '%s\n' "${@:2}" >>"$WORK/$1.expect"
}

# redis: two sessions, each COMMAND DOCS and these eight commands
printf '%s\n' 'SET k v' 'LPUSH l a' 'GET l' 'INCR k' 'FOOBAR x' 'GET k' \
	'HSET l f v' 'DEL nosuch' >"$WORK/redis.in"
for s in 1 2; do in_caller redis$s redis-cli -p $REDIS "<'$WORK/redis.in'"; done
expect redis '{"n": 10, "error": false}' '{"n": 4, "status": "WRONGTYPE", "error": true}' \
	'{"n": 4, "status": "ERR", "error": true}'

# postgresql: a script on one connection, then one query on another
cat >"$WORK/pg.sql" <<'SQL'
CREATE TABLE t (id int PRIMARY KEY);
INSERT INTO t VALUES (1);
INSERT INTO t VALUES (1);
SELEC 1;
SELECT count(*) FROM t;
SQL
psql_run() { # NAME ARGS...: no TLS or GSS request first (one startup exchange)
	in_caller "$1" PGSSLMODE=disable PGGSSENCMODE=disable psql -X -q \
		-h 127.0.0.1 -p $PG -U postgres "${@:2}" postgres "2>'$WORK/$1.err'"
}
psql_run pg_script -f "$WORK/pg.sql"
psql_run pg_one -c "'SELECT 1'"
expect postgresql '{"n": 6, "error": false}' '{"n": 1, "status": "23505", "error": true}' \
	'{"n": 1, "status": "42601", "error": true}'

# mysql: a script on one connection, --force past its errors
cat >"$WORK/maria.sql" <<'SQL'
CREATE DATABASE d;
CREATE TABLE d.t (id int PRIMARY KEY);
INSERT INTO d.t VALUES (1);
INSERT INTO d.t VALUES (1);
SELEC 1;
SELECT * FROM d.nosuch;
SELECT 1;
SQL
in_caller maria mariadb -h 127.0.0.1 -P $MYSQL -u root --force \
	"<'$WORK/maria.sql'" "2>'$WORK/maria.err'"
expect mysql '{"n": 5, "error": false}' '{"n": 1, "status": 1062, "error": true}' \
	'{"n": 1, "status": 1064, "error": true}' '{"n": 1, "status": 1146, "error": true}'

# memcached: one connection, a command at a time, each reply read whole;
# the client writes the outcome each reply must give
cat >"$WORK/memc.py" <<'PY'
import collections, json, socket, sys
ERRORS = ("ERROR", "CLIENT_ERROR", "SERVER_ERROR")
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rb")
seen = collections.Counter()
for cmd in [b"set k 0 0 1\r\nv\r\n", b"get k\r\n", b"get nosuch\r\n",
            b"delete nosuch\r\n", b"incr k 1\r\n", b"bogus\r\n",
            b"get nosuch2\r\n", b"delete k\r\n", b"delete k\r\n"]:
    s.sendall(cmd)
    first = f.readline().split()[0].decode()
    if first == "VALUE":  # the value's line, its data, END
        f.readline()
        assert f.readline() == b"END\r\n"
    seen[first] += 1
for word, n in sorted(seen.items()):
    print(json.dumps({"n": n, "status": word, "error": word in ERRORS}))
PY
in_caller memc python3 "$WORK/memc.py" $MC
cp "$WORK/memc.out" "$WORK/memcached.expect"

# dns: a query per connection
q=0
for name in a.svc.test b.svc.test x.gone.test nothing.example a.svc.test; do
	in_caller dig$((++q)) dig +tcp -p $DNS @127.0.0.1 $name
	status=$(sed -n 's/.*status: \([A-Z]*\),.*/\1/p' "$WORK/dig$q.out")
	error=true
	[[ $status = NOERROR || $status = NXDOMAIN ]] && error=false
	echo "$status" >>"$WORK/dns.statuses"
	expect dns "{\"n\": 1, \"status\": \"$status\", \"error\": $error}"
done
sleep 1.1 # two intervals
stop_kmond
out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"

# --- the clients did what they say, by the servers' own counts ---
stats=$(redis-cli -p $REDIS info all | tr -d '\r')
errs=$(awk -F '[:=,]' '/^errorstat_/ { printf "%s:%s ", $1, $3 }' <<<"$stats")
expect_eq "redis error replies" "$errs" "errorstat_ERR:4 errorstat_WRONGTYPE:4 "
docs=$(sed -n 's/^cmdstat_command|docs:calls=\([0-9]*\),.*/\1/p' <<<"$stats")
expect_eq "redis-cli's COMMAND DOCS" "$docs" 2
pg=$(grep -oE '^[0-9A-Z]{5}:ERROR' "$WORK/postgres.log" | sort | tr '\n' ' ')
expect_eq "postgres errors (SQLSTATE)" "$pg" "23505:ERROR 42601:ERROR "
my=$(grep -oE '^ERROR [0-9]+' "$WORK/maria.err" | tr '\n' ' ')
expect_eq "mariadb errors" "$my" "ERROR 1062 ERROR 1064 ERROR 1146 "
mc=$(python3 -c 'import json, sys
print(" ".join("%s:%d" % (r["status"], r["n"]) for r in map(json.loads, open(sys.argv[1]))))' \
	"$WORK/memcached.expect")
expect_eq "memcached replies" "$mc" "CLIENT_ERROR:1 DELETED:1 END:2 ERROR:1 NOT_FOUND:2 STORED:1 VALUE:1"
expect_eq "dns answers" "$(tr '\n' ' ' <"$WORK/dns.statuses")" \
	"NOERROR NOERROR NXDOMAIN REFUSED NOERROR "

# --- kmond's records; every check runs, each failure named at the end ---
failed=()
for pair in redis:$REDIS postgresql:$PG mysql:$MYSQL memcached:$MC dns:$DNS; do
	proto=${pair%%:*} port=${pair#*:}
	for side in server client; do
		echo "--- $proto, $side side"
		$CHECK exact "$out" --side $side --port $port --expect "$WORK/$proto.expect" ||
			failed+=("$proto $side side")
	done
done
echo "--- aggregates"
$CHECK aggregates "$out" --service cache --service db --service maria \
	--service memc --service dns --endpoint 127.0.0.1:$REDIS \
	--endpoint 127.0.0.1:$PG --endpoint 127.0.0.1:$MYSQL \
	--endpoint 127.0.0.1:$MC --endpoint 127.0.0.1:$DNS ||
	failed+=("outcome counts of topology and load")
[ ${#failed[@]} -eq 0 ] || fail "$(printf '%s; ' "${failed[@]}")"
