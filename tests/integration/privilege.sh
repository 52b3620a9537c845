#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Least privilege: after start-up kmond holds only the capabilities it
# still needs, with no_new_privs, in every thread (librdkafka's too); it
# still loads a collector switched on by SIGHUP afterwards; it refuses
# configs others can write.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"

cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_priv"
write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - name: priv
    match: { comm: kmt_priv }
collectors:
  syscall: { enabled: $1, syscalls: [getppid] }
exporters:
  - { type: file, path: "-" }
  - { type: kafka, brokers: "$BROKERS", topic_prefix: "kmon.", flush_timeout: 5s }
YAML
}
start_broker
write_config false
start_kmond "$WORK/kmond.yaml"
# CAP_DAC_READ_SEARCH 2, CAP_SYS_PTRACE 19, CAP_SYS_RESOURCE 24,
# CAP_SYSLOG 34, CAP_PERFMON 38, CAP_BPF 39; of those, what this test
# itself may hold (a sandbox can lack some). CAP_SYS_ADMIN 21 too where
# perf_event_paranoid is 3 (Debian's kernels): perf_event_open needs it.
ours=$((16#$(awk '$1 == "CapBnd:" { print $2 }' /proc/self/status)))
kept=$(((1 << 2) | (1 << 19) | (1 << 24) | (1 << 34) | (1 << 38) | (1 << 39)))
[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ] && kept=$((kept | (1 << 21)))
want=$(printf '%016x' $((ours & kept)))
threads=$(ls /proc/$KMOND_PID/task | wc -l)
[ "$threads" -gt 2 ] || fail "only $threads threads: no librdkafka threads to check"
for task in /proc/$KMOND_PID/task/*; do
	for field in CapEff CapPrm CapBnd; do
		got=$(awk -v f="$field:" '$1 == f { print $2 }' $task/status)
		expect_eq "$field of thread $(cat $task/comm)" "$got" "$want"
	done
done
expect_eq "CapInh" "$(awk '$1 == "CapInh:" { print $2 }' /proc/$KMOND_PID/status)" 0000000000000000
expect_eq "NoNewPrivs" "$(awk '$1 == "NoNewPrivs:" { print $2 }' /proc/$KMOND_PID/status)" 1

# A collector switched on after the drop still loads and attaches.
write_config true
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "not reloaded"
grep -q "collector syscall: running" "$WORK/kmond.err" || fail "syscall did not start"
"$WORK/kmt_priv" 321
sleep 0.5
stop_kmond
expect_eq "count after a post-drop start" "$($RECORDS "$WORK/out.json" --kind syscall --where service=priv --sum count)" 321

# Configs someone else could write are refused, with the reason.
chmod g+w "$WORK/kmond.yaml"
"$KMOND" -c "$WORK/kmond.yaml" --check 2>"$WORK/err"
expect_eq "exit code, group-writable" $? 2
grep -q "^$WORK/kmond.yaml:1:1: refused: writable by its group" "$WORK/err" || fail "message: $(cat "$WORK/err")"
chmod g-w,o+w "$WORK/kmond.yaml"
"$KMOND" -c "$WORK/kmond.yaml" --check 2>"$WORK/err"
expect_eq "exit code, world-writable" $? 2
chmod o-w "$WORK/kmond.yaml"
chown 65534 "$WORK/kmond.yaml"
"$KMOND" -c "$WORK/kmond.yaml" --check 2>"$WORK/err"
expect_eq "exit code, not owned by root" $? 2
grep -q "refused: owned by uid 65534, not root" "$WORK/err" || fail "message: $(cat "$WORK/err")"
chown 0 "$WORK/kmond.yaml"
"$KMOND" -c "$WORK/kmond.yaml" --check >/dev/null
expect_eq "exit code, root-owned 0644" $? 0
