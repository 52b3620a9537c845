/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* STUB: replaced by the decode branch's outcome.h at merge. */
#ifndef KMON_OUTCOME_H
#define KMON_OUTCOME_H

#define OUTCOME_REQ_HEAD 96
#define OUTCOME_RESP_HEAD 48

struct outcome {
	__u32 status;
	__u8 known;
	__u8 error;
	__u8 status_class;
	__u8 pad;
};

static inline void outcome_classify(struct outcome *o, __u32 proto, __u32 side,
				    const __u8 *resp, __u32 resp_len)
{
	__u32 code;

	__builtin_memset(o, 0, sizeof(*o));
	if (proto != 1 || resp_len < 12 || resp[0] != 'H' || resp[4] != '/')
		return;
	if (resp[9] < '1' || resp[9] > '5' || resp[10] < '0' ||
	    resp[10] > '9' || resp[11] < '0' || resp[11] > '9')
		return;
	code = (resp[9] - '0') * 100 + (resp[10] - '0') * 10 + resp[11] - '0';
	o->known = 1;
	o->status = code;
	o->status_class = code / 100;
	o->error = code >= 500 || (side == 1 && code >= 400);
}
#endif
