// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* For bench/tcp_link_bench.c only (kmond never loads it): the request
 * path code of the tcp collector (tcp_link.bpf.h, the very functions
 * tcp.bpf.c calls) run in a loop inside the kernel, timed there, so the
 * figure is the code's own and not the noise of a shared machine's
 * end-to-end runs. One turn is what a thread-per-request server costs
 * per request it serves with one call: the request starts (an id, its
 * thread's count, its step), the call starts (an id, the thread looked
 * up, the count per service), the answer is read, the response starts
 * (the count released), each a step of the thread (tcp_handler.bpf.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "maps.bpf.h"
#include "tcp/tcp.h"
#include "tcp/tcp_link.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 turns; /* set by user space */
__u32 linking; /* 0: the empty loop, the floor */
__u64 elapsed_ns; /* the last run's */
__u64 wrong; /* calls not linked to their request (must stay 0) */
struct tcp_conn server, client;

static long turn(__u64 i, void *ctx)
{
	if (!linking)
		return 0;
	server.tid = (__u32)bpf_get_current_pid_tgid();
	link_request(&server);
	step_read(server.tid, server.id);
	link_call(&client);
	step_other();
	if (client.parent != server.id)
		wrong++;
	unit_release(&client); /* the answer's first bytes */
	step_other();
	link_answered(&server);
	step_other();
	return 0;
}

SEC("raw_tp")
int tcp_link_bench(void *ctx)
{
	__u64 t0 = bpf_ktime_get_ns();

	bpf_loop(turns, turn, NULL, 0);
	elapsed_ns = bpf_ktime_get_ns() - t0;
	return 0;
}
