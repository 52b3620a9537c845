// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Covered offsets per partition (coverage.h). */
#include <stdlib.h>
#include <string.h>

#include "coverage.h"
#include "lib/json_parse.h"
#include "lib/xalloc.h"

struct span {
	int64_t start, next;
};

/* One partition's covered offsets: disjoint, sorted, none touching. */
struct partition {
	int32_t id;
	struct span *spans;
	size_t n;
};

struct topo_coverage {
	struct partition *parts;
	size_t n;
};

struct topo_coverage *coverage__new(void)
{
	struct topo_coverage *c = xrealloc(NULL, sizeof(*c));

	memset(c, 0, sizeof(*c));
	return c;
}

void coverage__free(struct topo_coverage *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->parts[i].spans);
	free(c->parts);
	free(c);
}

static struct partition *partition__of(struct topo_coverage *c, int32_t id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->parts[i].id == id)
			return &c->parts[i];
	c->parts = xrealloc(c->parts, (c->n + 1) * sizeof(*c->parts));
	c->parts[c->n] = (struct partition){ .id = id };
	return &c->parts[c->n++];
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

uint64_t coverage__add(struct topo_coverage *c, int32_t id, int64_t start,
		       int64_t next)
{
	struct partition *p = partition__of(c, id);
	struct span joined = { start, next };
	uint64_t twice = 0;
	size_t i = 0, first, kept;

	if (next <= start)
		return 0;
	while (i < p->n && p->spans[i].next < start)
		i++;
	first = i;
	/* every span touching or overlapping [start, next) joins it */
	for (; i < p->n && p->spans[i].start <= next; i++) {
		int64_t lo = max64(start, p->spans[i].start);
		int64_t hi = min64(next, p->spans[i].next);

		if (hi > lo)
			twice += (uint64_t)(hi - lo);
		joined.start = min64(joined.start, p->spans[i].start);
		joined.next = max64(joined.next, p->spans[i].next);
	}
	kept = p->n - (i - first);
	if (i == first)
		p->spans = xrealloc(p->spans, (p->n + 1) * sizeof(*p->spans));
	memmove(&p->spans[first + 1], &p->spans[i],
		(p->n - i) * sizeof(*p->spans));
	p->spans[first] = joined;
	p->n = kept + 1;
	return twice;
}

int coverage__add_json(struct topo_coverage *c, const struct json_value *a,
		       uint64_t *offsets, uint64_t *twice)
{
	if (!a || a->type != JSON_ARRAY)
		return -1;
	for (size_t i = 0; i < a->arr.n; i++) {
		const struct json_value *g = &a->arr.items[i];
		int64_t partition, start, next;

		if (!json__i64(json__get(g, "partition"), &partition) ||
		    !json__i64(json__get(g, "start"), &start) ||
		    !json__i64(json__get(g, "next"), &next) || next < start)
			return -1;
		*twice += coverage__add(c, (int32_t)partition, start, next);
		*offsets += (uint64_t)(next - start);
	}
	return 0;
}

int64_t coverage__end(const struct topo_coverage *c, int32_t id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->parts[i].id == id && c->parts[i].n)
			return c->parts[i].spans[c->parts[i].n - 1].next;
	return -1;
}

bool coverage__span(const struct topo_coverage *c, size_t k, int32_t *partition,
		    int64_t *start, int64_t *next)
{
	for (size_t i = 0; i < c->n; k -= c->parts[i].n, i++) {
		if (k >= c->parts[i].n)
			continue;
		*partition = c->parts[i].id;
		*start = c->parts[i].spans[k].start;
		*next = c->parts[i].spans[k].next;
		return true;
	}
	return false;
}
