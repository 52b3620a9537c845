#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# SIGHUP: a broken config is refused with file:line:col and the old one
# keeps running; a valid one is applied; the file sink is reopened (log
# rotation). SIGTERM flushes and exits 0. The stats record counts it all.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_first"
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_second"
log=$WORK/records.json
write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - name: svc
    match: { comm: $1 }
collectors:
  syscall: { enabled: true, syscalls: [getppid] }
exporters:
  - { type: file, path: "$log" }
YAML
}
write_config kmt_first
start_kmond "$WORK/kmond.yaml"

# A broken config: refused, logged with its position, old one kept.
printf 'interval: 200ms\nservices: [\n' >"$WORK/kmond.yaml"
kill -HUP $KMOND_PID
wait_for_log "reload refused" || fail "no refusal logged"
grep -q "$WORK/kmond.yaml:3:1: " "$WORK/kmond.err" || fail "no file:line:col in the log"
echo "ok: broken config refused with its position"
"$WORK/kmt_first" 100
"$WORK/kmt_second" 100
sleep 0.5
kill -0 $KMOND_PID || fail "kmond died on a broken config"

# Rotation: move the file away, SIGHUP with a valid config (now selecting
# kmt_second), and records go to a new file at the same path.
mv "$log" "$log.1"
write_config kmt_second
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "valid config not reloaded"
"$WORK/kmt_first" 200
"$WORK/kmt_second" 300
sleep 0.6
stop_kmond

old=$($RECORDS "$log.1" --kind syscall --where comm=kmt_first --sum count)
expect_eq "before the reload: kmt_first counted" "$old" 100
old=$($RECORDS "$log.1" --kind syscall --where comm=kmt_second --count)
expect_eq "before the reload: kmt_second not selected" "$old" 0
[ -s "$log" ] || fail "no new file after rotation"
new=$($RECORDS "$log" --kind syscall --where comm=kmt_second --sum count)
expect_eq "after the reload: kmt_second counted" "$new" 300
new=$($RECORDS "$log" --kind syscall --where comm=kmt_first --count)
expect_eq "after the reload: kmt_first no longer selected" "$new" 0
last_stats=$(grep '"kind":"stats"' "$log" | tail -1)
echo "$last_stats" | grep -q '"reloads":1,"reload_failures":1' ||
	fail "stats do not count the reloads: $last_stats"
echo "ok: stats count one reload and one refused reload"
