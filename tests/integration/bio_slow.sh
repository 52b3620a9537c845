#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: exact bytes of slow requests (another's I/O could merge)
# slow: 1ns makes every I/O a bio_slow record with the submitter's kernel
# stack; a reload raising the threshold stops them and keeps the BPF
# programs loaded. --probe names the attach method of each bio hook.
source "$(dirname "$0")/../lib/kmond.sh"

MIB=$((1024 * 1024))
hooks=$("$KMOND" --probe | awk '$1 == "bio" { print $2 ":" $3 }' | tr '\n' ' ')
echo "probe: $hooks"
for h in io_start rq_insert rq_issue rq_complete; do
	[[ "$hooks" == *"$h:"[a-z]* ]] || fail "--probe does not list bio $h"
done

write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
collectors:
  bio: { enabled: true, slow: $1 }
YAML
}

write_config 1ns
start_kmond "$WORK/kmond.yaml"
progs_before=$(prog_ids $KMOND_PID)
dd if=/dev/zero of="$WORK/file" bs=1M count=8 oflag=direct 2>/dev/null &
first=$!
wait $first || fail "dd failed"
sleep 0.8
write_config 1h
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "not reloaded"
dd if=/dev/zero of="$WORK/file2" bs=1M count=8 oflag=direct 2>/dev/null &
second=$!
wait $second || fail "dd failed"
sleep 0.8
progs_after=$(prog_ids $KMOND_PID)
stop_kmond

out=$WORK/out.json
# A completion the kernel ran no program for is counted lost (bio_short.py).
got=$($RECORDS "$out" --kind bio_slow --where pid=$first --where op=write --sum bytes)
$BIO_SHORT "$out" $((8 * MIB)) "$got" "bytes of slow writes of the first dd" ||
	fail "bytes of slow writes of the first dd"
slow=$($RECORDS "$out" --kind bio_slow --where pid=$first --where op=write --count)
got=$($RECORDS "$out" --kind bio --where pid=$first --where op=write --sum count)
expect_eq "slow writes (every one)" "$slow" "$got"
python3 - "$out" $first <<'PY' || fail "stacks of the slow I/Os"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
# dd's writes (a cold page cache can make it read its own pages too)
slow = [r for r in recs if r["kind"] == "bio_slow" and
        r["pid"] == int(sys.argv[2]) and r["op"] == "write"]
ok = bool(slow)
for r in slow:
    st = r["stack"]
    # Submitted by dd's write(): the block layer (submit_bio on 6.5+,
    # the plug flush where only insert sees it), below it the write
    # syscall; the BPF and tracing frames are cut off.
    good = (any(f.startswith(("blk_", "submit_bio")) for f in st) and
            any("write" in f for f in st) and
            not any(f.startswith(("bpf_", "__bpf_trace")) for f in st) and
            r["comm"] == "dd" and r["disk"] and r["latency_ns"] > 0)
    if not good:
        print("bad record:", json.dumps(r))
    ok &= good
print("ok: %d slow records with submission stacks, e.g. %s" % (len(slow), slow[0]["stack"][:3] if slow else None))
sys.exit(0 if ok else 1)
PY
got=$($RECORDS "$out" --kind bio_slow --where pid=$second --count)
expect_eq "slow records after raising the threshold" "$got" 0
got=$($RECORDS "$out" --kind bio --where pid=$second --where op=write --sum bytes)
$BIO_SHORT "$out" $((8 * MIB)) "$got" "the second dd still counted" ||
	fail "the second dd still counted"
expect_eq "BPF program ids across the reload" "$progs_after" "$progs_before"
