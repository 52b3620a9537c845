#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: runs container_tcp
# container_tcp.sh with the containers' cgroup path in the v1 hierarchies
# only, the v2 one saying "/" (tests/lib/container.sh: CONTAINER_CGROUP=v1;
# hybrid hosts only).
CONTAINER_CGROUP=v1 exec bash "$(dirname "$0")/container_tcp.sh"
