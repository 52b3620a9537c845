/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The bucket layout of kmond's log-linear histograms, shared by the BPF
 * programs that count into buckets and user space that reads them
 * (user/lib/histogram.h). Latency percentiles come from a fixed 8 KiB per
 * series instead of every sample.
 *
 * Layout: values 0..15 each have their own bucket. Above that, every power
 * of two [2^k, 2^(k+1)) is split into HIST_SUB equal sub-buckets, so a
 * bucket is at most 1/16 (6.25%) of its lower bound wide. Buckets 0..31 are
 * exact (width 1). Bucket b covers [hist__bucket_low(b), hist__bucket_high(b)].
 *
 * The layout and hist_bucket() use only fixed-width types and plain
 * arithmetic so BPF programs can aggregate into the same buckets. */
#ifndef KMON_BPF_HISTOGRAM_H
#define KMON_BPF_HISTOGRAM_H

/* vmlinux.h gives BPF objects __u32/__u64 but not the <stdint.h> names,
 * and <stdint.h> cannot be included there. */
#ifdef __bpf__
#define HIST_U32 __u32
#define HIST_U64 __u64
#else
#include <stdint.h>
#define HIST_U32 uint32_t
#define HIST_U64 uint64_t
#endif

#define HIST_SUB_BITS 4
#define HIST_SUB (1U << HIST_SUB_BITS)
/* group 0 is the linear 0..15; groups 1..60 are the msb positions 4..63 */
#define HIST_GROUPS (64 - HIST_SUB_BITS + 1)
#define HIST_BUCKETS (HIST_GROUPS * HIST_SUB) /* 976 */

/* floor(log2(v)) for v > 0, in six steps: no loop for the verifier, no
 * builtin the BPF backend may lack. */
static inline HIST_U32 hist_log2(HIST_U64 v)
{
	HIST_U32 r = 0, s;

	s = (HIST_U32)(v > 0xffffffffULL) << 5;
	v >>= s;
	r |= s;
	s = (HIST_U32)(v > 0xffffULL) << 4;
	v >>= s;
	r |= s;
	s = (HIST_U32)(v > 0xffULL) << 3;
	v >>= s;
	r |= s;
	s = (HIST_U32)(v > 0xfULL) << 2;
	v >>= s;
	r |= s;
	s = (HIST_U32)(v > 0x3ULL) << 1;
	v >>= s;
	r |= s;
	return r | (HIST_U32)(v >> 1);
}

static inline HIST_U32 hist_bucket(HIST_U64 v)
{
	HIST_U32 msb;

	if (v < HIST_SUB)
		return (HIST_U32)v;
	msb = hist_log2(v);
	/* the HIST_SUB_BITS bits below the msb pick the sub-bucket */
	return (msb - HIST_SUB_BITS + 1) * HIST_SUB +
	       (HIST_U32)((v >> (msb - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

#endif
