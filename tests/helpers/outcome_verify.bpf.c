// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* For tests/helpers/kmt_outcome_verify.c only (kmond never loads it): the
 * request-outcome classifier (bpf/tcp/outcome.h) run by the kernel on a
 * response head in a map value and in a stack array, the two places the
 * tcp collector may hold one. The length and the protocol come from the
 * map, unknown to the verifier, as they are in the collector: that it
 * loads is the proof the classifier passes the verifier; what it answers,
 * compared with user space's answer, the proof the two agree. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "outcome_verify.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct outcome_input input; /* written by user space */
struct outcome from_map, from_stack;

SEC("raw_tp")
int outcome_in_map(void *ctx)
{
	outcome_classify(&from_map, input.proto, input.side, input.resp,
			 input.len);
	return 0;
}

SEC("raw_tp")
int outcome_on_stack(void *ctx)
{
	__u8 resp[OUTCOME_RESP_HEAD];

	__builtin_memcpy(resp, input.resp, sizeof(resp));
	outcome_classify(&from_stack, input.proto, input.side, resp, input.len);
	return 0;
}
