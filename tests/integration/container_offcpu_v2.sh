#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: runs container_offcpu
# container_offcpu.sh with the containers laid out as on a cgroup v2-only
# host (tests/lib/container.sh: CONTAINER_CGROUP=v2).
CONTAINER_CGROUP=v2 exec bash "$(dirname "$0")/container_offcpu.sh"
