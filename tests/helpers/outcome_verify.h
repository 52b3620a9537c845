/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The input of tests/helpers/outcome_verify.bpf.c, shared with
 * kmt_outcome_verify.c (fixed-width types only). */
#ifndef KMON_OUTCOME_VERIFY_H
#define KMON_OUTCOME_VERIFY_H

#include "../../bpf/tcp/outcome.h"

struct outcome_input {
	__u32 proto;
	__u32 side;
	__u32 len; /* any value: the classifier bounds it itself */
	__u32 stream; /* HTTP/2: the request's stream */
	__u8 resp[OUTCOME_RESP_HEAD];
};

#endif
