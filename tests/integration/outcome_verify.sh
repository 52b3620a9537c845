#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The request-outcome classifier (bpf/tcp/outcome.h) passes the verifier
# on a head in a map value and in a stack array, and the kernel's answers
# are user space's: tests/helpers/kmt_outcome_verify.c runs it with
# BPF_PROG_TEST_RUN on the fixtures' responses (real traffic), failing replies,
# their truncations and mutants, under every protocol and both sides.
source "$(dirname "$0")/../lib/kmond.sh"

"$BUILD/tests/kmt_outcome_verify" tests/unit/protocol tests/unit/outcome \
	>"$WORK/verify.out" ||
	{ cat "$WORK/verify.out"; fail "kernel and user space outcomes differ"; }
cat "$WORK/verify.out"
grep -q '^ok: ' "$WORK/verify.out" || fail "no verdict from kmt_outcome_verify"
