/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A send's bytes where tcp_sendmsg_locked sees them: read by protocol
 * identification (proto.bpf.h) and request outcomes (outcome.bpf.h). */
#ifndef KMON_SEND_BUFFER_BPF_H
#define KMON_SEND_BUFFER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include "core_fixes.bpf.h"

/* Where a send's first bytes are: its user buffer, or its first iovec
 * (*iov), holding *avail of its len bytes; NULL for a send from the
 * kernel's pages (sendfile, splice). */
static __always_inline const void *send_base(const struct iov_iter *it,
					     __u32 len, __u32 *avail,
					     const struct iovec **iov)
{
	const void *base = NULL;
	__u8 type = it->iter_type;

	*avail = 0;
	*iov = NULL;
	if (type == bpf_core_enum_value(enum iter_type, ITER_UBUF)) {
		base = it->ubuf;
		*avail = len;
	} else if (type == bpf_core_enum_value(enum iter_type, ITER_IOVEC)) {
		*iov = iov_iter_first_iovec(it);
		base = (*iov)->iov_base;
		*avail = (*iov)->iov_len;
	}
	if (*avail > len)
		*avail = len;
	return base;
}

#endif
