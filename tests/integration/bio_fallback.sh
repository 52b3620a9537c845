#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The bio collector on raw tracepoints (kernels without BTF tracepoints):
# with tp_btf denied on its four hooks, the dd test's checks hold all the
# same. (On plain tracepoints requests are keyed by sector and bytes can
# be approximate, as docs/design/bio.md says: not held to the exact figures.)
export KMOND_PROBE_DENY=tp_btf:block_io_start,tp_btf:block_rq_insert,tp_btf:block_rq_issue,tp_btf:block_rq_complete
EXPECT_ATTACH=raw_tp bash "$(dirname "$0")/bio_dd.sh"
