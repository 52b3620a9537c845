// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "collectors/tcp/links.h"
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/record.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provider/provider.h"
#include "bpf/tcp/tcp.h"

#define PREFIX_BITS (64 - TCP_ID_SERIAL_BITS)

static const char *const link_names[] = {
	[TCP_LINK_THREAD] = "thread",
	[TCP_LINK_SPAWN] = "spawn",
	[TCP_LINK_CONNECT] = "connect",
	[TCP_LINK_INLINE] = "inline",
};

uint64_t tcp_links__prefix(const char *node)
{
	char boot[64] = "";
	uint64_t h = fnv1a(node, strlen(node)), now;
	pid_t pid = getpid();
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			boot[0] = '\0';
		fclose(f);
	}
	now = clock_ns(CLOCK_REALTIME);
	h = fnv1a_more(h, boot, strlen(boot));
	h = fnv1a_more(h, &now, sizeof(now));
	h = fnv1a_more(h, &pid, sizeof(pid));
	/* fold the whole hash into the prefix's bits */
	h ^= h >> 32;
	h ^= h >> PREFIX_BITS;
	h &= (1ULL << PREFIX_BITS) - 1;
	return (h ?: 1) << TCP_ID_SERIAL_BITS;
}

uint32_t tcp_links__cpu_bits(int cpu_ids)
{
	uint32_t bits = 0;

	while (bits < 16 && (1 << bits) < cpu_ids)
		bits++;
	return bits;
}

/* 32 hex digits, the high half looking random; returns the end. */
static char *put_trace(char *p, uint64_t root)
{
	return strbuf__put_hex64(strbuf__put_hex64(p, mix64(root)), root);
}

void tcp_links__trace(uint64_t root, char out[33])
{
	*put_trace(out, root) = '\0';
}

/* Hex ids are written straight into the record: nothing to escape. */
static void id_field(struct record *r, const char *name, uint64_t id)
{
	record__plain_end(r, strbuf__put_hex64(record__plain_begin(r, name, 16),
					       id));
}

void tcp_links__fields(struct record *r, uint64_t id, uint64_t parent,
		       uint32_t link)
{
	if (!id) /* a request kmond saw start before its ids (not expected) */
		return;
	id_field(r, "id", id);
	record__plain_end(r, put_trace(record__plain_begin(r, "trace", 32),
				       parent ?: id));
	if (!parent)
		return;
	id_field(r, "parent", parent);
	record__str(r, "link",
		    link < ARRAY_SIZE(link_names) && link_names[link] ?
			    link_names[link] :
			    "unknown");
}

/* --- counts --- */

struct tcp_links_report {
	int ncpus;
	struct tcp_links *vals; /* one per CPU */
	struct tcp_links was[TCP_MAX_LINK_SVCS]; /* reported so far */
};

struct tcp_links_report *tcp_links__new(int ncpus)
{
	struct tcp_links_report *l = xcalloc(1, sizeof(*l));

	l->ncpus = ncpus;
	l->vals = xcalloc(ncpus, sizeof(*l->vals));
	return l;
}

void tcp_links__free(struct tcp_links_report *l)
{
	if (!l)
		return;
	free(l->vals);
	free(l);
}

/* This interval's calls of service svc into *d. */
static void delta(struct tcp_links_report *l, int fd, __u32 svc,
		  struct tcp_links *d)
{
	struct tcp_links now = { 0 };

	memset(d, 0, sizeof(*d));
	if (bpf_map_lookup_elem(fd, &svc, l->vals))
		return;
	for (int cpu = 0; cpu < l->ncpus; cpu++) {
		now.linked += l->vals[cpu].linked;
		now.unlinked += l->vals[cpu].unlinked;
	}
	d->linked = now.linked - l->was[svc].linked;
	d->unlinked = now.unlinked - l->was[svc].unlinked;
	l->was[svc] = now;
}

void tcp_links__stats(struct tcp_links_report *l, int fd, struct provider *p,
		      struct record *r)
{
	static struct tcp_links d[TCP_MAX_LINK_SVCS];
	uint64_t linked = 0, unlinked = 0;
	__u32 n = 1;

	/* Service ids are dense from 1: up to the first with no name. */
	for (__u32 svc = 0; svc < TCP_MAX_LINK_SVCS; svc++) {
		struct proc_name who;

		if (svc) {
			provider__name(p, 0, svc, &who);
			if (!who.service)
				break;
		}
		delta(l, fd, svc, &d[svc]);
		linked += d[svc].linked;
		unlinked += d[svc].unlinked;
		n = svc + 1;
	}
	record__u64(r, "linked", linked);
	record__u64(r, "unlinked", unlinked);
	record__object_begin(r, "calls");
	for (__u32 svc = 1; svc < n; svc++) {
		struct proc_name who;

		if (!d[svc].linked && !d[svc].unlinked)
			continue;
		provider__name(p, 0, svc, &who);
		record__object_begin(r, who.service);
		record__u64(r, "linked", d[svc].linked);
		record__u64(r, "unlinked", d[svc].unlinked);
		record__object_end(r);
	}
	record__object_end(r);
}
