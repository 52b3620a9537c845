# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# OpenTelemetry's own OTLP definitions for the kmon-trace tests: the npm
# package @opentelemetry/otlp-transformer (its generated protobuf root),
# installed once from the npm registry into the build dir and kept there.
# Sourced after kmond.sh.
#   otlp_setup                 installs it unless already there
#   otlp_check FILE...         every line a valid ExportTraceServiceRequest
#   trace_gen DIR [ARGS...]    a fleet's tcp records (tests/lib/trace_gen.py)
#   trace_check OTLP EXPECTED [--stats FILE]   the traces are the expected ones
KMON_TRACE=$BUILD/kmon-trace
OTLP_DIR=$(realpath -m "$BUILD/npm-otlp")
OTLP_MODULES=$OTLP_DIR/node_modules
OTLP_LIB=$(dirname "${BASH_SOURCE[0]}")

otlp_setup() {
	local lock
	mkdir -p "$(dirname "$OTLP_DIR")"
	# one install at a time: tests/run's lanes may start two of these
	# tests at once on a fresh build
	exec {lock}>>"$OTLP_DIR.lock"
	flock -x "$lock"
	otlp_install
	exec {lock}>&-
}

otlp_install() {
	local tmp
	[ -f "$OTLP_MODULES/@opentelemetry/otlp-transformer/build/src/generated/root.js" ] &&
		cmp -s "$OTLP_LIB/otlp-package.json" "$OTLP_DIR/package.json" && return 0
	command -v node >/dev/null && command -v npm >/dev/null ||
		fail "node and npm are not installed (scripts/install-deps.sh test)"
	# Installed beside, then moved into place: a test killed halfway
	# leaves no half-installed tree that looks complete.
	tmp=$(mktemp -d "$(dirname "$OTLP_DIR")/npm-otlp.XXXXXX")
	cp "$OTLP_LIB/otlp-package.json" "$tmp/package.json"
	(cd "$tmp" && npm install --no-audit --no-fund --ignore-scripts \
		--loglevel=error >npm.log 2>&1) ||
		{ tail -20 "$tmp/npm.log" >&2; rm -rf "$tmp"; fail "npm install failed"; }
	rm -rf "$OTLP_DIR"
	mv "$tmp" "$OTLP_DIR"
}

otlp_check() {
	node "$OTLP_LIB/otlp_check.js" "$OTLP_MODULES" "$@" ||
		fail "OTLP JSON refused by OpenTelemetry's definitions: $*"
}

trace_gen() {
	python3 "$OTLP_LIB/trace_gen.py" "$@" || fail "trace_gen $*"
}

trace_check() {
	python3 "$OTLP_LIB/trace_check.py" "$@" || fail "traces in $1 are not the expected ones"
}
