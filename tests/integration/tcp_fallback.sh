#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: runs tcp_load
# The syscall fallback (kernels without sock:sock_{recv,send}_length):
# with those tracepoints denied, the tcp collector reads the bytes at
# every syscall's exit, and the checks of tcp_requests.sh (thread per
# connection, IPv6, older connections), tcp_nginx.sh (event loop,
# sendfile, writev) and tcp_join.sh (the client side, sequence numbers)
# hold all the same. Without tcp_sendmsg_locked either (as before 6.3), a
# client's call starts and a server's response ends at a send syscall's
# entry (sys_enter): tcp_response_end.sh holds too, and
# tcp_response_end_server.sh (no client connection followed). And
# reload_toggle_tcp.sh: switched off by a reload, the collector's last
# requests (its kernel-side batch: no protocol to wait for here) still
# come out.
export KMOND_PROBE_DENY=sock_recv_length,sock/sock_recv_length,sock_send_length,sock/sock_send_length,tcp_sendmsg_locked
dir=$(dirname "$0")
bash "$dir/tcp_requests.sh" && bash "$dir/tcp_nginx.sh" &&
	bash "$dir/tcp_join.sh" && bash "$dir/tcp_load.sh" &&
	bash "$dir/tcp_response_end.sh" &&
	bash "$dir/tcp_response_end_server.sh" &&
	bash "$dir/reload_toggle_tcp.sh"
