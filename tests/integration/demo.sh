#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: 15 containers under load; every podman container and netns
# `make demo` in its short form: the fifteen-tier shop in containers
# under load for DEMO_DURATION seconds (45 here) with kmond, Prometheus,
# the broker and the consumers (demo/run.sh). What kmond found is checked
# against the shop's own knowledge (tests/lib/demo_check.py: every edge
# of its call graph and no other, protocols, the failing tier's errors
# against the load generator's count, the order events on the shop's
# broker, kmon-trace's parent links against the shop's own call tree
# (tests/lib/demo_calltree.py), the slowed tier and its fault in its
# off-CPU flame graph); headless Chromium loads the index page with
# every picture; and nothing the demo started is left running.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/chromium.sh"

container_ready
# the shop's image is made once from Debian's mirror (demo/image.sh)
"${PODMAN[@]}" image exists localhost/kmon-demo:bookworm ||
	curl -sf -m 10 -o /dev/null http://deb.debian.org/debian/dists/bookworm/Release ||
	skip "no image of the shop and no Debian mirror to make it from (a guest without network)"
FAULT_TIER=shipping
FAULT_MS=25
OUT=$WORK/demo
DEMO_DURATION=${DEMO_DURATION:-45} FAULT_TIER=$FAULT_TIER FAULT_MS=$FAULT_MS \
	BUILD=$BUILD demo/run.sh "$OUT" >"$WORK/demo.log" 2>&1 ||
	fail "demo/run.sh: $(tail -20 "$WORK/demo.log")"
cat "$WORK/demo.log"
# DEMO_KEEP=DIR keeps what the demo wrote, for a closer look
[ -z "${DEMO_KEEP:-}" ] || cp -r "$OUT/." "$DEMO_KEEP/" || fail "cannot keep the demo in $DEMO_KEEP"
python3 "$(dirname "$0")/../lib/demo_check.py" "$OUT" --fault-tier $FAULT_TIER \
	--fault-ms $FAULT_MS || fail "what kmond found is not what the shop did"

left=$("${PODMAN[@]}" ps -a --format '{{.Names}}' | grep -c '^kmd-')
expect_eq "containers the demo left" "$left" 0
left=$(ip netns list | grep -c '^kmd-')
expect_eq "network namespaces the demo left" "$left" 0

# the page in a browser: every picture loaded (the page counts them
# once loaded; --dump-dom writes the DOM after that)
chromium_run --virtual-time-budget=10000 --dump-dom "file://$OUT/index.html" >"$WORK/dom.html"
grep -q 'data-pictures="4"' "$WORK/dom.html" ||
	fail "the page did not count its 4 pictures: $(grep -o '<body[^>]*>' "$WORK/dom.html")"
expect_eq "pictures loaded in Chromium" \
	"$(grep -o 'data-loaded="[0-9]*"' "$WORK/dom.html")" 'data-loaded="4"'
