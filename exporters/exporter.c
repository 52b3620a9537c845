// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "exporters/exporter.h"
#include "lib/log.h"
#include "lib/record.h"

struct exporter {
	const struct sink_ops *ops[CONFIG_MAX_EXPORTERS];
	struct sink *sinks[CONFIG_MAX_EXPORTERS];
	int nsinks;
	uint64_t records;
	/* what closed sinks delivered and lost, so stats stay monotonic */
	struct sink_stats closed;
};

static const struct sink_ops *sink_ops_for(enum exporter_type type)
{
	if (type == EXPORTER_PROMETHEUS)
		return &prometheus_sink_ops;
	return type == EXPORTER_KAFKA ? &kafka_sink_ops : &file_sink_ops;
}

struct exporter *exporter__new(const struct config *cfg, char *err,
			       size_t errlen)
{
	struct exporter *e = calloc(1, sizeof(*e));

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (int i = 0; i < cfg->nexporters; i++) {
		const struct sink_ops *ops =
			sink_ops_for(cfg->exporters[i].type);

		if (ops->open(&e->sinks[i], &cfg->exporters[i], err, errlen)) {
			exporter__free(e);
			return NULL;
		}
		e->ops[i] = ops;
		e->nsinks++;
	}
	return e;
}

void exporter__send(struct exporter *e, const struct record *r)
{
	e->records++;
	for (int i = 0; i < e->nsinks; i++)
		e->ops[i]->send(e->sinks[i], r);
}

void exporter__flush(struct exporter *e, int timeout_ms)
{
	for (int i = 0; i < e->nsinks; i++)
		e->ops[i]->flush(e->sinks[i], timeout_ms);
}

void exporter__reopen(struct exporter *e)
{
	for (int i = 0; i < e->nsinks; i++)
		if (e->ops[i]->reopen && e->ops[i]->reopen(e->sinks[i]))
			log_warn("cannot reopen a %s sink", e->ops[i]->type);
}

static void add_stats(struct sink_stats *sum, const struct sink_stats *st)
{
	sum->sent += st->sent;
	sum->delivered += st->delivered;
	sum->failed += st->failed;
	sum->dropped += st->dropped;
	sum->queued += st->queued;
}

void exporter__stats(struct exporter *e, struct exporter_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->records = e->records;
	st->sinks = e->closed;
	for (int i = 0; i < e->nsinks; i++) {
		struct sink_stats one = { 0 };

		e->ops[i]->stats(e->sinks[i], &one);
		add_stats(&st->sinks, &one);
	}
}

void exporter__free(struct exporter *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->nsinks; i++)
		e->ops[i]->close(e->sinks[i]);
	free(e);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_exporter(const struct exporter_cfg *a,
			  const struct exporter_cfg *b)
{
	if (a->type != b->type || !same_str(a->path, b->path) ||
	    !same_str(a->brokers, b->brokers) ||
	    !same_str(a->topic_prefix, b->topic_prefix) ||
	    a->nprops != b->nprops || a->queue_messages != b->queue_messages ||
	    a->queue_bytes != b->queue_bytes || a->drop != b->drop ||
	    a->flush_timeout_ns != b->flush_timeout_ns ||
	    !same_str(a->listen, b->listen) || a->expire_ns != b->expire_ns ||
	    a->max_series != b->max_series)
		return false;
	for (int i = 0; i < a->nprops; i++)
		if (!same_str(a->props[i].key, b->props[i].key) ||
		    !same_str(a->props[i].value, b->props[i].value))
			return false;
	return true;
}

int exporter__reconfigure(struct exporter *e, const struct config *cur,
			  const struct config *next, int flush_ms, char *err,
			  size_t errlen)
{
	struct exporter *fresh = calloc(1, sizeof(*fresh));
	bool kept[CONFIG_MAX_EXPORTERS] = { false };

	if (!fresh) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < next->nexporters; i++) {
		const struct exporter_cfg *want = &next->exporters[i];
		int same = -1;

		for (int j = 0; j < e->nsinks && same < 0; j++)
			if (!kept[j] && same_exporter(&cur->exporters[j], want))
				same = j;
		if (same >= 0) {
			kept[same] = true;
			fresh->sinks[i] = e->sinks[same];
			fresh->ops[i] = e->ops[same];
		} else {
			fresh->ops[i] = sink_ops_for(want->type);
			if (fresh->ops[i]->open(&fresh->sinks[i], want, err,
						errlen))
				goto undo;
		}
		fresh->nsinks++;
	}
	/* Commit: close what the new config dropped, keep the counts. */
	for (int j = 0; j < e->nsinks; j++) {
		struct sink_stats st = { 0 };

		if (kept[j])
			continue;
		e->ops[j]->flush(e->sinks[j], flush_ms);
		e->ops[j]->stats(e->sinks[j], &st);
		/* What it still holds is lost when it closes: count it failed
		 * now so the totals stay monotonic and add up. */
		st.failed += st.queued;
		st.queued = 0;
		add_stats(&e->closed, &st);
		e->ops[j]->close(e->sinks[j]);
	}
	memcpy(e->sinks, fresh->sinks, sizeof(e->sinks));
	memcpy(e->ops, fresh->ops, sizeof(e->ops));
	e->nsinks = fresh->nsinks;
	free(fresh);
	return 0;
undo:
	for (int i = 0; i < fresh->nsinks; i++) {
		bool reused = false;

		for (int j = 0; j < e->nsinks; j++)
			reused |= fresh->sinks[i] == e->sinks[j];
		if (!reused)
			fresh->ops[i]->close(fresh->sinks[i]);
	}
	free(fresh);
	return -1;
}
