#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-view's SVGs in a real browser: headless Chromium screenshots of a
# flame graph and a heatmap are not blank and show the shapes drawn (the
# "all" frame's grey, the busiest cell's red); the flame graph's script
# runs and zooms (FILE.svg#zoom=NAME, read back with --dump-dom).
source "$(dirname "$0")/../lib/kmond.sh"

VIEW=$BUILD/kmon-view
PNG="python3 $(dirname "$0")/../lib/png_colors.py"
source "$(dirname "$0")/../lib/chromium.sh"

# screenshot SVG PNG
screenshot() {
	chromium_run --screenshot="$2" --window-size=1200,800 "file://$1" >/dev/null
	[ -s "$2" ] || fail "chromium wrote no screenshot of $1: $(tail -5 "$WORK/chromium.err")"
}

# not_blank PNG: many colours, the background not everything
not_blank() {
	local w h colours majority
	read -r w h colours majority < <($PNG "$1") || fail "cannot decode $1"
	expect_eq "$(basename "$1") size" "${w}x$h" 1200x800
	[ "$colours" -ge 20 ] || fail "$1: only $colours colours: blank?"
	python3 -c "import sys; sys.exit(not $majority < 0.95)" ||
		fail "$1: one colour covers $majority of the picture"
	echo "ok: $(basename "$1") has $colours colours, background $majority"
}

t0=1700000000000000000
for i in 0 1 2 3 4 5; do
	printf '{"kind":"offcpu","ts":%d,"node":"vm","pid":%d,"comm":"%s","service":"web","stack":["schedule+0x2a","do_nanosleep+0x1%d","hrtimer_nanosleep+0x8","__x64_sys_clock_nanosleep+0x5","do_syscall_64+0x4","clock_nanosleep+0x1","main+0x9"],"total_ns":%d,"count":%d}\n' \
		$((t0 + i * 1000000000)) $((100 + i % 2)) "sleeper$((i % 2))" $i $((1000000 * (i + 1))) $((i + 1))
	printf '{"kind":"offcpu","ts":%d,"node":"vm","pid":200,"comm":"db","service":"store","stack":["schedule+0x2a","io_schedule+0x1","blk_mq_get_tag+0x3","pwrite64+0x2","flush_log+0x1"],"total_ns":%d,"count":%d}\n' \
		$((t0 + i * 1000000000)) $((300000 * (i + 2))) $((2 * i + 1))
done >"$WORK/off.json"

"$VIEW" flame -i "$WORK/off.json" -o "$WORK/flame.svg" || fail "flame"
"$VIEW" heatmap -i "$WORK/off.json" --step 1s -o "$WORK/heat.svg" || fail "heatmap"

screenshot "$WORK/flame.svg" "$WORK/flame.png"
not_blank "$WORK/flame.png"
grey=$($PNG "$WORK/flame.png" --pixels 200,200,205)
[ "$grey" -ge 10000 ] || fail "flame.png: the all frame's grey covers $grey pixels"
echo "ok: the all frame is drawn ($grey pixels)"

screenshot "$WORK/heat.svg" "$WORK/heat.png"
not_blank "$WORK/heat.png"
red=$($PNG "$WORK/heat.png" --pixels 189,0,38)
[ "$red" -ge 100 ] || fail "heat.png: the busiest cell's red covers $red pixels"
echo "ok: the busiest heatmap cell is drawn ($red pixels)"

# The script runs in the browser: zoomed into sleeper1, that frame spans
# the full width and db's frames are hidden.
chromium_run --dump-dom "file://$WORK/flame.svg#zoom=sleeper1" >"$WORK/dom.xml"
grep -q 'data-ready="1"' "$WORK/dom.xml" || fail "the flame graph's script did not run"
grep -Eq '<g class="f" data-n="sleeper1"[^>]*><title>[^<]*</title><rect x="10.00" [^>]*width="1180.00"' "$WORK/dom.xml" ||
	fail "zoom: sleeper1 does not span the width"
grep -Eq '<g class="f" data-n="db"[^>]*style="display: none;"' "$WORK/dom.xml" ||
	fail "zoom: db is still shown"
echo "ok: click-to-zoom script runs (sleeper1 zoomed, db hidden)"
