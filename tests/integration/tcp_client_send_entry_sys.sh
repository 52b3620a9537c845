#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tcp_client_send_entry.sh where tcp_sendmsg_locked is missing but the
# connection state is in the sockets (6.3 to 6.12): the send syscall's
# entry, on sys_enter, leaves its time per thread for the send's return
# (bpf/tcp/tcp.bpf.c: send_entries). Stamped at the return instead, the
# client's calls there waited less than its server worked.
KMOND_PROBE_DENY=tcp_sendmsg_locked exec bash "$(dirname "$0")/tcp_client_send_entry.sh"
