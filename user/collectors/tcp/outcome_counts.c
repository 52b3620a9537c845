// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "collectors/tcp/outcome_counts.h"
#include "lib/array.h"
#include "lib/record.h"

void outcome_counts__add(struct outcome_counts *to, const struct outcome *o)
{
	/* a status without an outcome: gRPC's 200, its grpc-status unread */
	if (o->status_class >= 1 && o->status_class <= 5)
		to->status_class[o->status_class - 1]++;
	if (!o->known)
		return;
	to->outcomes++;
	to->errors += o->error != 0;
}

void outcome_counts__sum(struct outcome_counts *to,
			 const struct outcome_counts *from)
{
	to->outcomes += from->outcomes;
	to->errors += from->errors;
	for (size_t i = 0; i < ARRAY_SIZE(to->status_class); i++)
		to->status_class[i] += from->status_class[i];
}

void outcome_counts__delta(struct outcome_counts *d, struct outcome_counts *was,
			   const struct outcome_counts *now)
{
	d->outcomes = now->outcomes - was->outcomes;
	d->errors = now->errors - was->errors;
	for (size_t i = 0; i < ARRAY_SIZE(d->status_class); i++)
		d->status_class[i] =
			now->status_class[i] - was->status_class[i];
	*was = *now;
}

void outcome_counts__record(struct record *rec, const struct outcome_counts *c)
{
	static const char *const names[] = { "status_1xx", "status_2xx",
					     "status_3xx", "status_4xx",
					     "status_5xx" };

	record__u64(rec, "outcomes", c->outcomes);
	record__u64(rec, "errors", c->errors);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (c->status_class[i])
			record__u64(rec, names[i], c->status_class[i]);
}
