# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Starts nginx on loopback with its own config, prefix and logs under
# $WORK (sourced after kmond.sh). The access log is the ground truth: one
# line per request, "status bytes_sent request_length method request_uri".
#   start_nginx PORT [WORKERS]  sets NGINX_PID (the master), waits until up;
#                               in cgroup NGINX_CGROUP (a v2 directory)
#                               when it is set; NGINX_LOCATIONS: more
#                               directives for its server block

NGINX=$(command -v nginx || echo /usr/sbin/nginx)

start_nginx() {
	local port=$1 workers=${2:-2} prefix=$WORK/nginx i
	mkdir -p "$prefix/html" "$prefix/logs"
	head -c 4096 /dev/urandom | base64 >"$prefix/html/index.html"
	cat >"$prefix/nginx.conf" <<NGINX
user root;
worker_processes $workers;
daemon off;
pid $prefix/nginx.pid;
error_log $prefix/logs/error.log;
events { worker_connections 1024; }
http {
	log_format counts '\$status \$bytes_sent \$request_length \$request_method \$request_uri';
	access_log $prefix/logs/access.log counts;
	client_body_temp_path $prefix/tmp_body;
	proxy_temp_path $prefix/tmp_proxy;
	fastcgi_temp_path $prefix/tmp_fastcgi;
	uwsgi_temp_path $prefix/tmp_uwsgi;
	scgi_temp_path $prefix/tmp_scgi;
	sendfile on;
	keepalive_requests 1000000;
	server {
		listen 127.0.0.1:$port;
		listen [::1]:$port;
		root $prefix/html;
		location /text { return 200 "hello\n"; }
		${NGINX_LOCATIONS:-}
	}
}
NGINX
	# NGINX_CGROUP: a cgroup (v2 directory) to start it in, as a service
	# manager would
	sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" || exit 1; shift; exec "$@"' \
		sh "${NGINX_CGROUP:-}" \
		"$NGINX" -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" &
	NGINX_PID=$!
	STARTED_PIDS+=($NGINX_PID)
	for ((i = 0; i < 50; i++)); do
		curl -s -o /dev/null "http://127.0.0.1:$port/text" && return 0
		sleep 0.1
	done
	fail "nginx did not start: $(tail -3 "$prefix/logs/error.log")"
}
