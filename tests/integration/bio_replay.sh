#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# To whom an I/O counts when its events run in other tasks' contexts: the
# bio programs played a request's life event by event (BPF_PROG_TEST_RUN,
# tests/helpers/kmt_bio_replay.c) in a selected and an unselected task.
# With block_io_start, a request issued and completed by another task is
# its starter's (blk-mq issues queued requests from whichever task runs
# the queue); without it (6.1), a request requeued by its driver and
# inserted again by kblockd's requeue work stays its submitter's.
source "$(dirname "$0")/../lib/kmond.sh"

for scenario in dispatch requeue; do
	"$BUILD/tests/kmt_bio_replay" $scenario || fail "kmt_bio_replay $scenario"
done
