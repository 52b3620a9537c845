#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: runs tcp_held_open
# Every iterator refused (KMOND_PROBE_FAIL_LOAD=iter makes the kernel
# refuse them at load): each collector takes its second way and counts
# all the same, by its own tests. tcp flushes quiet connections by a run
# over its connection hash (tcp_held_open: the last request of an idle
# connection comes within 2 intervals), drop learns the owners of
# listeners older than kmond from /proc (drop_owner), bio counts
# (bio_dd). Apart from probe_features.sh, which may run beside another
# test: tcp_held_open's bound on time may not.
source "$(dirname "$0")/../lib/kmond.sh"

KMOND_PROBE_FAIL_LOAD=iter bash "$(dirname "$0")/tcp_held_open.sh" ||
	fail "tcp_held_open with iterators refused"
KMOND_PROBE_FAIL_LOAD=iter bash "$(dirname "$0")/bio_dd.sh" ||
	fail "bio_dd with iterators refused"
# the owners of listeners older than kmond, from /proc
KMOND_PROBE_FAIL_LOAD=iter bash "$(dirname "$0")/drop_owner.sh" ||
	fail "drop_owner with iterators refused"
echo "ok: tcp, bio and drop count with every iterator refused"
