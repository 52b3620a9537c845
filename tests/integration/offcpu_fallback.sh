#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The offcpu collector on its fallbacks (kernels without BTF tracepoints,
# or without raw tracepoints): with the methods before them denied, the
# sleep test's checks hold all the same.
dir=$(dirname "$0")
KMOND_PROBE_DENY=tp_btf:sched_switch EXPECT_ATTACH=raw_tp bash "$dir/offcpu_sleep.sh" &&
	KMOND_PROBE_DENY=sched_switch EXPECT_ATTACH=tracepoint bash "$dir/offcpu_sleep.sh"
