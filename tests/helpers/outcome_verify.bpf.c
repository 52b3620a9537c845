// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* For tests/helpers/kmt_outcome_verify.c only (kmond never loads it): the
 * request-outcome classifier (bpf/tcp/outcome.h) run by the kernel on a
 * response head in a map value and in a stack array, the two places the
 * tcp collector may hold one. The length and the protocol come from the
 * map, unknown to the verifier, as they are in the collector: that it
 * loads is the proof the classifier passes the verifier; what it answers,
 * compared with user space's answer, the proof the two agree.
 * outcome_timed times it, for the figure of its cost per request. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "outcome_verify.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct outcome_input input; /* written by user space */
struct outcome from_map, from_stack;
__u64 turns; /* outcome_timed: classifications, set by user space */
__u32 classifying; /* 0: the empty loop, the floor */
__u64 elapsed_ns;

SEC("raw_tp")
int outcome_in_map(void *ctx)
{
	outcome_classify(&from_map, input.proto, input.side, input.resp,
			 input.len, input.stream);
	return 0;
}

SEC("raw_tp")
int outcome_on_stack(void *ctx)
{
	__u8 resp[OUTCOME_RESP_HEAD];

	__builtin_memcpy(resp, input.resp, sizeof(resp));
	outcome_classify(&from_stack, input.proto, input.side, resp, input.len,
			 input.stream);
	return 0;
}

static long classify_once(__u64 i, void *ctx)
{
	if (classifying)
		outcome_classify(&from_map, input.proto, input.side, input.resp,
				 input.len, input.stream);
	return 0;
}

/* The classifier's cost, timed in the kernel: turns classifications of
 * the input, or as many empty turns. */
SEC("raw_tp")
int outcome_timed(void *ctx)
{
	__u64 t0 = bpf_ktime_get_ns();

	bpf_loop(turns, classify_once, NULL, 0);
	elapsed_ns = bpf_ktime_get_ns() - t0;
	return 0;
}
