// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Forwards are kept by their hashed trace id, for late_ns at most
 * (aging.h). */
#include <stdlib.h>

#include "aging.h"
#include "forwards.h"
#include "lib/xalloc.h"

struct forwards {
	struct aging *by_from; /* hashed from -> struct forward */
	uint64_t late_ns;
};

struct forwards *forwards__new(size_t max, uint64_t late_ns)
{
	struct forwards *f = xcalloc(1, sizeof(*f));

	f->by_from = aging__new(max, sizeof(struct forward));
	f->late_ns = late_ns;
	return f;
}

void forwards__free(struct forwards *f)
{
	if (!f)
		return;
	aging__free(f->by_from);
	free(f);
}

bool forwards__add(struct forwards *f, const struct forward *fw,
		   uint64_t now_ns)
{
	forwards__expire(f, now_ns);
	if (forwards__find(f, fw->from))
		return true;
	aging__add(f->by_from, trace_id__key(fw->from), fw->partition, fw,
		   now_ns);
	return false;
}

const struct forward *forwards__find(const struct forwards *f,
				     struct trace_id id)
{
	const struct forward *fw = aging__find(f->by_from, trace_id__key(id));

	/* two ids with one hash: not this one */
	return fw && trace_id__eq(fw->from, id) ? fw : NULL;
}

struct trace_id forwards__resolve(const struct forwards *f, struct trace_id id)
{
	const struct forward *fw;
	int hops;

	for (hops = 0; hops < FORWARDS_HOPS; hops++) {
		fw = forwards__find(f, id);
		if (!fw)
			break;
		id = fw->to;
	}
	return id;
}

void forwards__expire(struct forwards *f, uint64_t now_ns)
{
	aging__expire(f->by_from,
		      now_ns >= f->late_ns ? now_ns - f->late_ns + 1 : 0);
}

size_t forwards__hand_over(struct forwards *f,
			   bool (*revoked)(int32_t partition, void *ctx),
			   void (*fn)(const void *forward, void *ctx),
			   void *ctx)
{
	return aging__take(f->by_from, revoked, fn, ctx);
}

size_t forwards__count(const struct forwards *f)
{
	return aging__count(f->by_from);
}
