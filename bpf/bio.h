/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Block I/O: event ABI shared by BPF and user space.
 *
 * Every request is followed from its start to its completion in the
 * kernel (bio_inflight, keyed by the struct request, or by (dev, sector)
 * where only the plain tracepoints exist). At completion its latency
 * (issue -> complete), its queue time (insert -> issue) and its bytes are
 * added to cumulative per-CPU counters under (process, service, disk, op,
 * what, bucket): histograms in histogram.h's buckets, so user space reads
 * per-interval increases and no event leaves the kernel per I/O. Only
 * I/Os slower than the configured threshold go through the ringbuf. */
#ifndef KMON_BIO_H
#define KMON_BIO_H

#define BIO_MAX_KEYS 16384 /* (key, what, bucket) counters */
#define BIO_MAX_INFLIGHT 16384 /* requests between start and completion */
#define BIO_STACK_ENTRIES 1024
#define BIO_RINGBUF_BYTES (256 * 1024)

/* dev_t as the kernel keeps it (not glibc's encoding). */
#define BIO_MINOR_BITS 20
#define BIO_MKDEV(ma, mi) ((__u32)(ma) << BIO_MINOR_BITS | (__u32)(mi))

enum bio_op {
	BIO_OP_READ,
	BIO_OP_WRITE,
	BIO_OP_FLUSH,
	BIO_OP_DISCARD,
	BIO_OP_OTHER, /* write zeroes, zone management, driver-private */
	BIO_NR_OPS,
};

enum bio_what {
	BIO_LATENCY, /* bucket: hist_bucket(issue -> complete ns) */
	BIO_QUEUE, /* bucket: hist_bucket(insert -> issue ns) */
	BIO_BYTES, /* bucket 0; the value sums bytes, not I/Os */
};

struct bio_key {
	__u32 pid; /* tgid of the submitter */
	__u32 svc; /* its service id when it submitted, 0: none */
	__u32 dev; /* BIO_MKDEV(major, minor) of the disk */
	__u8 op; /* enum bio_op */
	__u8 what; /* enum bio_what */
	__u16 bucket;
};

/* A request in flight; the key is the request. Times are monotonic ns, 0
 * for an event not seen (yet). */
struct bio_start {
	__u64 start_ns; /* when it was first seen */
	__u64 insert_ns; /* last insert into the scheduler */
	__u64 issue_ns; /* last issue to the driver */
	__u64 bytes; /* completed so far (partial completions) */
	__u32 pid;
	__u32 svc;
	__u64 kstack; /* the submitter's kernel stack's hash, 0: none */
	__u32 stack_gen; /* stack_gen when it was taken: which map holds it */
	/* The submitting thread's, for slow I/Os: the process may have come
	 * and gone before user space hears of it. Empty when !slow_on. */
	char comm[16];
	/* Requeued since its last issue: its next insert (from kblockd's
	 * requeue work) is not the first sight of a new request. */
	__u8 requeued;
	__u8 pad[3];
};

struct bio_rq_key {
	__u64 rq; /* struct request *, 0 when keyed by sector */
	__u64 sector; /* with dev: the plain tracepoints' key */
	__u32 dev;
	__u32 pad;
};

/* An I/O slower than the threshold. */
struct bio_slow_event {
	__u64 latency_ns;
	__u64 queue_ns; /* 0 when it skipped the scheduler */
	__u64 bytes;
	__u64 sector;
	__u32 pid;
	__u32 svc;
	__u64 kstack; /* the stack's hash in its generation's map, 0: none */
	__u32 dev;
	__u8 op;
	__u8 queued; /* it went through an insert */
	__u16 pad;
	__u32 stack_gen; /* of the start: which map holds kstack */
	char comm[16];
	__u32 pad2;
};

enum bio_stat {
	BIO_KEYS_FULL, /* I/Os with no room for their counters */
	BIO_INFLIGHT_FULL, /* requests with no room to be followed */
	BIO_RB_LOST, /* slow I/Os the ringbuf had no room for */
	BIO_STACK_LOST, /* starts without a stack (its map full) */
	/* Issued requests whose completion our program never ran for (the
	 * kernel skipped it), found when the request is used again. */
	BIO_COMPLETION_LOST,
	/* Requests completed with data whose issue our program never ran
	 * for: no latency to count. */
	BIO_ISSUE_LOST,
	BIO_NR_STATS,
};

#endif
