#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: runs proto_cgroups
# proto_cgroups.sh where sends are not read at tcp_sendmsg_locked (before
# it was a BTF tracepoint): the cgroups get the egress program too, and
# an older connection's sends are not taken for its start either.
KMOND_PROBE_DENY=tcp_sendmsg_locked exec bash "$(dirname "$0")/proto_cgroups.sh"
