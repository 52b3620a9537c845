#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The CLI contract: exit codes, --check, --probe, --version, --duration,
# file:line:col errors.
source "$(dirname "$0")/../lib/kmond.sh"

# kmond refuses configs others can write: test on a root-owned copy.
install -m 0644 configs/kmond.yaml "$WORK/default.yaml"

"$KMOND" --version | grep -Eq '^kmond [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version"
echo "ok: --version"

"$KMOND" --bogus >/dev/null 2>&1
expect_eq "exit code of an unknown option" $? 2
"$KMOND" --duration abc >/dev/null 2>&1
expect_eq "exit code of a bad --duration" $? 2

"$KMOND" -c "$WORK/missing.yaml" --check 2>"$WORK/err"
expect_eq "exit code of a missing config" $? 2
grep -q "^$WORK/missing.yaml:1:1: cannot open: No such file or directory$" "$WORK/err" ||
	fail "missing config message: $(cat "$WORK/err")"

printf 'interval: 1s\ncollectors:\n  syscall: { enabled: maybe }\n' >"$WORK/bad.yaml"
"$KMOND" -c "$WORK/bad.yaml" --check 2>"$WORK/err"
expect_eq "exit code of --check on a bad config" $? 2
expect_eq "--check message" "$(cat "$WORK/err")" \
	"$WORK/bad.yaml:3:23: enabled: expected true or false, got 'maybe'"
"$KMOND" -c "$WORK/bad.yaml" 2>"$WORK/err"
expect_eq "exit code of a run on a bad config" $? 2

"$KMOND" -c "$WORK/default.yaml" --check >"$WORK/out"
expect_eq "exit code of --check on the default config" $? 0
expect_eq "--check output" "$(cat "$WORK/out")" "$WORK/default.yaml: ok"

install -m 0644 configs/example.yaml "$WORK/example.yaml"
"$KMOND" -c "$WORK/example.yaml" --check >"$WORK/out"
expect_eq "--check on configs/example.yaml" "$? $(cat "$WORK/out")" "0 $WORK/example.yaml: ok"

"$KMOND" --probe >"$WORK/probe"
expect_eq "exit code of --probe" $? 0
grep -Eq '^syscall +sys_enter +(tp_btf|raw_tp|tracepoint) ' "$WORK/probe" ||
	fail "--probe has no syscall line: $(cat "$WORK/probe")"
grep -Eq '^provider +exec +(tp_btf|raw_tp) ' "$WORK/probe" ||
	fail "--probe has no provider line"
echo "ok: --probe"

# --duration: runs, emits records, exits 0 by itself, timed from "running
# on" (start-up, loading every collector, takes seconds in a qemu guest).
"$KMOND" -c "$WORK/default.yaml" --duration 1.5 >"$WORK/run.json" 2>"$WORK/err" &
pid=$!
for ((i = 0; i < 600; i++)); do
	grep -q "running on" "$WORK/err" && break
	sleep 0.05
done
start=$(date +%s%N)
wait $pid
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
expect_eq "exit code of --duration" $rc 0
[ $elapsed_ms -ge 1200 ] && [ $elapsed_ms -le 6000 ] || fail "--duration 1.5 took $elapsed_ms ms"
stats=$($RECORDS "$WORK/run.json" --kind stats --count)
[ "$stats" -ge 2 ] || fail "expected 2 stats records, got $stats"
syscalls=$($RECORDS "$WORK/run.json" --kind syscall --count)
[ "$syscalls" -ge 1 ] || fail "the default config recorded no syscall"
echo "ok: --duration ran ${elapsed_ms} ms with $stats stats and $syscalls syscall records"
