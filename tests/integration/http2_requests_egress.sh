#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# http2_requests as a kernel before 6.13 runs it (no tcp_sendmsg_locked):
# the sends' bytes and their control frames seen by the cgroup egress
# program, the sends themselves at their return; TLS not read, so its
# h2c parts.
KMOND_PROBE_DENY=tcp_sendmsg_locked exec bash "$(dirname "$0")/http2_requests.sh"
