# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The trace accuracy harness's application (tests/lib/trace_app.py) on
# loopback, for tests/integration/trace_accuracy.sh and
# bench/trace-accuracy.sh. Sourced after tests/lib/kmond.sh (or
# bench/lib.sh) and tests/lib/caller.sh: uses WORK, STARTED_PIDS, fail.
#   trace_stack_start        Redis, PostgreSQL, back, the four middle
#                            tiers, nginx, front; the load's caller shell
#   trace_stack_config FILE  a kmond config that monitors every tier of
#                            ours by pid (Redis and PostgreSQL are not)
#   trace_stack_warm         the middles open their PostgreSQL connections
#   trace_stack_run VARIANT CONC N [SEED]
#                            N front requests from CONC connections
#                            through VARIANT (thread, pool, asyncio, nginx,
#                            spawn, handoff: a pool whose selector thread
#                            reads the requests), labelled VARIANT-cCONC
#   trace_stack_stop         stops our tiers (their connections close, so
#                            kmond writes their last requests)
# Ground truth: $WORK/truth/*.json, one file per process.
# Variants: the middle service each one calls (names are kmond services).
declare -A TRACE_VIA=([thread]=middle-thread [pool]=middle-pool
	[asyncio]=middle-asyncio [nginx]=nginx [spawn]=middle-spawn
	[handoff]=middle-handoff)
TRACE_APP="/usr/bin/python3 $(dirname "${BASH_SOURCE[0]}")/trace_app.py"
TRACE_SCORE="/usr/bin/python3 $(dirname "${BASH_SOURCE[0]}")/trace_accuracy.py"
TRACE_POOL_WORKERS=4 # smaller than the concurrency of 8 and 32
declare -A TRACE_PID

trace_bg() { # NAME CMD...: runs a tier, its pid in TRACE_PID[NAME]
	local name=$1
	shift
	"$@" >>"$WORK/$name.log" 2>&1 &
	TRACE_PID[$name]=$!
	STARTED_PIDS+=($!)
}

trace_stack_start() {
	local p
	p=$(test_port 11)
	T_REDIS=$p T_PG=$((p + 1)) T_BACK=$((p + 2)) T_FRONT=$((p + 3))
	T_NGINX=$((p + 4)) T_BEHIND=$((p + 5))
	declare -gA T_MID=([middle-thread]=$((p + 6)) [middle-pool]=$((p + 7))
		[middle-asyncio]=$((p + 8)) [middle-spawn]=$((p + 9))
		[middle-handoff]=$((p + 10)))
	mkdir -p "$WORK/truth" "$WORK/pg" "$WORK/ngx/logs"
	chmod 755 "$WORK" # postgres runs as its own user under it
	trace_bg redis redis-server --port $T_REDIS --bind 127.0.0.1 --save '' \
		--appendonly no --daemonize no --dir "$WORK"
	local pgbin
	pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
	chown postgres "$WORK/pg"
	su postgres -s /bin/sh -c "$pgbin/initdb -D $WORK/pg/data -A trust -U postgres" \
		>"$WORK/initdb.log" 2>&1 || fail "initdb: $(tail -3 "$WORK/initdb.log")"
	trace_bg postgres su postgres -s /bin/sh -c "exec $pgbin/postgres -D $WORK/pg/data \
-p $T_PG -k $WORK/pg -c listen_addresses=127.0.0.1 -c max_connections=100"

	trace_bg back $TRACE_APP back --port $T_BACK --log "$WORK/truth/back.json"
	local down="--redis $T_REDIS --pg $T_PG --back $T_BACK" svc
	trace_bg middle-thread $TRACE_APP middle --mode thread --svc middle-thread \
		--port ${T_MID[middle-thread]} --log "$WORK/truth/middle-thread.json" $down
	trace_bg middle-spawn $TRACE_APP middle --mode thread --fanout spawn \
		--svc middle-spawn --port ${T_MID[middle-spawn]} \
		--log "$WORK/truth/middle-spawn.json" $down
	trace_bg middle-pool $TRACE_APP middle --mode pool --workers $TRACE_POOL_WORKERS \
		--svc middle-pool --port ${T_MID[middle-pool]} \
		--log "$WORK/truth/middle-pool.json" $down
	trace_bg middle-handoff $TRACE_APP middle --mode pool --handoff \
		--workers $TRACE_POOL_WORKERS --svc middle-handoff \
		--port ${T_MID[middle-handoff]} --log "$WORK/truth/middle-handoff.json" $down
	trace_bg middle-asyncio $TRACE_APP middle --mode asyncio --svc middle-asyncio \
		--port ${T_MID[middle-asyncio]} --log "$WORK/truth/middle-asyncio.json" $down
	trace_bg behind-nginx $TRACE_APP middle --mode thread --svc behind-nginx \
		--via nginx --body-apart --port $T_BEHIND --log "$WORK/truth/behind-nginx.json" $down
	cat >"$WORK/ngx/nginx.conf" <<NGINX
worker_processes 2;
daemon off;
pid $WORK/ngx/nginx.pid;
error_log $WORK/ngx/logs/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $WORK/ngx/tb;
	proxy_temp_path $WORK/ngx/tp;
	fastcgi_temp_path $WORK/ngx/tf;
	uwsgi_temp_path $WORK/ngx/tu;
	scgi_temp_path $WORK/ngx/ts;
	keepalive_requests 1000000;
	upstream behind { server 127.0.0.1:$T_BEHIND; keepalive 64; keepalive_requests 1000000; }
	server {
		listen 127.0.0.1:$T_NGINX;
		location / {
			proxy_pass http://behind;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
}
NGINX
	trace_bg nginx "$(command -v nginx || echo /usr/sbin/nginx)" -p "$WORK/ngx" \
		-c "$WORK/ngx/nginx.conf" -e "$WORK/ngx/logs/error.log"
	local targets="--target nginx=$T_NGINX"
	for svc in "${!T_MID[@]}"; do targets+=" --target $svc=${T_MID[$svc]}"; done
	trace_bg front $TRACE_APP front --port $T_FRONT --log "$WORK/truth/front.json" $targets
	wait_port $T_REDIS || fail "redis did not start on port $T_REDIS"
	wait_port $T_PG || fail "postgres did not start on port $T_PG"
	for p in $T_BACK $T_FRONT $T_NGINX $T_BEHIND "${T_MID[@]}"; do
		wait_port $p || fail "a tier did not start on port $p"
	done
	start_caller
}

trace_stack_config() {
	local svc
	{
		echo "interval: 250ms"
		echo "services:"
		echo "  - { name: load, match: { pid: $CALLER_PID } }"
		for svc in front back nginx behind-nginx "${!T_MID[@]}"; do
			echo "  - { name: $svc, match: { pid: ${TRACE_PID[$svc]} } }"
		done
		echo "collectors:"
		echo "  tcp: { enabled: true }"
		echo "exporters:"
		echo "  - { type: file, path: \"-\" }"
	} >"$1"
}

trace_stack_warm() {
	local p
	for p in $T_BEHIND "${T_MID[@]}"; do
		curl -sf --max-time 30 -o /dev/null "http://127.0.0.1:$p/warm" || fail "middle on $p: no /warm"
	done
}

trace_stack_run() { # VARIANT CONC N [SEED]
	local via=${TRACE_VIA[$1]:-}
	[ -n "$via" ] || fail "no variant $1"
	[ ! -e "$WORK/load-$1-$2.rc" ] || fail "run $1-c$2 twice: its ground truth would mix"
	in_caller "load-$1-$2" $TRACE_APP load --port $T_FRONT --log "$WORK/truth/load.json" \
		--run "$1-c$2" --variant "$1" --to $via --conc "$2" --requests "$3" \
		--seed "${4:-$RANDOM}"
}

trace_stack_stop() {
	local name
	for name in front back nginx behind-nginx "${!T_MID[@]}"; do
		kill -TERM "${TRACE_PID[$name]}" 2>/dev/null
	done
	for name in front back nginx behind-nginx "${!T_MID[@]}"; do
		wait "${TRACE_PID[$name]}" 2>/dev/null
	done
	return 0
}
