# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Headless Chromium for the tests that look at pictures (sourced after
# kmond.sh): its profile under $WORK, its stderr in $WORK/chromium.err.
#   chromium_run ARGS...    chromium --headless ... ARGS (a URL among
#                           them), within 90 s times TEST_TIME_SCALE (a
#                           qemu guest runs chromium far slower)
command -v chromium >/dev/null || fail "chromium is not installed (scripts/install-deps.sh)"

chromium_run() {
	timeout $((90 * ${TEST_TIME_SCALE:-1})) chromium --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking \
		--disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$WORK/chromium.XXXXXX")" "$@" \
		2>>"$WORK/chromium.err"
}
