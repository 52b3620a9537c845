// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Series by (family, labels) in one hash map (64-bit hash -> series, a
 * chain for the rare collision), and per family a list in first-seen
 * order that rendering walks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hashmap.h"
#include "lib/histogram.h"
#include "exporters/prom_series.h"

/* The kernel bucket edges (histogram.h) closest to 50us, 100us, 250us,
 * 500us, 1ms ... 10s, minus one: a bucket [low, high] lies entirely at or
 * below each bound or entirely above it (test_prom_series checks). */
const uint64_t prom_le_ns[PROM_NLE] = {
	49151,	   98303,      253951,	   507903,     1015807,	    2490367,
	4980735,   9961471,    25165823,   50331647,   100663295,   251658239,
	503316479, 1006632959, 2550136831, 5100273663, 10200547327,
};

struct prom_series {
	const struct prom_family *fam;
	char *labels;
	uint64_t hash;
	struct prom_series *chain; /* same hash */
	uint64_t value; /* counter or gauge; a histogram's sum */
	uint64_t last_total; /* add_cumulative's previous figure */
	uint64_t updated_ns;
	uint64_t *buckets; /* histograms: PROM_NLE + 1 (+Inf), not cumulative */
	uint64_t count;
};

struct prom_fam_list {
	const struct prom_family *fam;
	struct prom_series **series;
	size_t n, cap;
};

struct prom_table {
	struct hashmap *by_hash;
	struct prom_fam_list *fams;
	size_t nfams;
	size_t nseries; /* all, own included */
	size_t nlimited; /* the ones max_series bounds */
	uint64_t expire_ns, max_series;
	uint64_t dropped;
};

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		fprintf(stderr, "kmond: out of memory\n");
		abort();
	}
	return p;
}

struct prom_table *prom_table__new(uint64_t expire_ns, uint64_t max_series)
{
	struct prom_table *t = xrealloc(NULL, sizeof(*t));

	memset(t, 0, sizeof(*t));
	t->by_hash = hashmap__new();
	prom_table__set_limits(t, expire_ns, max_series);
	return t;
}

void prom_table__set_limits(struct prom_table *t, uint64_t expire_ns,
			    uint64_t max_series)
{
	t->expire_ns = expire_ns;
	t->max_series = max_series;
}

static void series_free(struct prom_series *s)
{
	free(s->labels);
	free(s->buckets);
	free(s);
}

void prom_table__free(struct prom_table *t)
{
	if (!t)
		return;
	for (size_t f = 0; f < t->nfams; f++) {
		for (size_t i = 0; i < t->fams[f].n; i++)
			series_free(t->fams[f].series[i]);
		free(t->fams[f].series);
	}
	free(t->fams);
	hashmap__free(t->by_hash);
	free(t);
}

static uint64_t series_hash(const struct prom_family *fam, const char *labels)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ (uintptr_t)fam;

	for (const unsigned char *p = (const void *)labels; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	return h;
}

static struct prom_fam_list *fam_list(struct prom_table *t,
				      const struct prom_family *fam)
{
	for (size_t f = 0; f < t->nfams; f++)
		if (t->fams[f].fam == fam)
			return &t->fams[f];
	t->fams = xrealloc(t->fams, (t->nfams + 1) * sizeof(*t->fams));
	t->fams[t->nfams] = (struct prom_fam_list){ .fam = fam };
	return &t->fams[t->nfams++];
}

struct prom_series *prom_table__get(struct prom_table *t,
				    const struct prom_family *fam,
				    const char *labels, uint64_t now_ns)
{
	uint64_t h = series_hash(fam, labels), *slot;
	struct prom_series *s, *head = NULL;
	struct prom_fam_list *fl;

	slot = hashmap__find(t->by_hash, h);
	if (slot)
		head = (struct prom_series *)(uintptr_t)*slot;
	for (s = head; s; s = s->chain)
		if (s->fam == fam && strcmp(s->labels, labels) == 0) {
			s->updated_ns = now_ns;
			return s;
		}
	if (!fam->own && t->max_series && t->nlimited >= t->max_series) {
		t->dropped++;
		return NULL;
	}
	s = xrealloc(NULL, sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->fam = fam;
	s->labels = strdup(labels);
	s->hash = h;
	s->updated_ns = now_ns;
	if (!s->labels)
		abort();
	if (fam->type == PROM_HISTOGRAM) {
		s->buckets = xrealloc(NULL, (PROM_NLE + 1) * sizeof(uint64_t));
		memset(s->buckets, 0, (PROM_NLE + 1) * sizeof(uint64_t));
	}
	s->chain = head;
	hashmap__set(t->by_hash, h, (uintptr_t)s);
	fl = fam_list(t, fam);
	if (fl->n == fl->cap) {
		fl->cap = fl->cap ? fl->cap * 2 : 16;
		fl->series =
			xrealloc(fl->series, fl->cap * sizeof(*fl->series));
	}
	fl->series[fl->n++] = s;
	t->nseries++;
	t->nlimited += !fam->own;
	return s;
}

void prom_series__add(struct prom_series *s, uint64_t v)
{
	s->value += v;
}

void prom_series__set(struct prom_series *s, uint64_t v)
{
	s->value = v;
}

void prom_series__add_cumulative(struct prom_series *s, uint64_t total)
{
	s->value += total >= s->last_total ? total - s->last_total : total;
	s->last_total = total;
}

void prom_series__observe_bucket(struct prom_series *s, uint64_t low_ns,
				 uint64_t count)
{
	uint32_t b = hist_bucket(low_ns);
	uint64_t mid = hist__bucket_low(b) / 2 + hist__bucket_high(b) / 2;
	int i = 0;

	/* Edges line up, so the low bound decides for the whole bucket. */
	while (i < PROM_NLE && low_ns > prom_le_ns[i])
		i++;
	s->buckets[i] += count;
	s->count += count;
	s->value += mid * count;
}

uint64_t prom_series__value(const struct prom_series *s)
{
	return s->value;
}

/* Unlinks s from the hash chain it is on. */
static void unhash(struct prom_table *t, struct prom_series *s)
{
	uint64_t *slot = hashmap__find(t->by_hash, s->hash);
	struct prom_series **pp;

	if (!slot)
		return;
	if ((struct prom_series *)(uintptr_t)*slot == s) {
		if (s->chain)
			*slot = (uintptr_t)s->chain;
		else
			hashmap__delete(t->by_hash, s->hash);
		return;
	}
	for (pp = &((struct prom_series *)(uintptr_t)*slot)->chain; *pp;
	     pp = &(*pp)->chain)
		if (*pp == s) {
			*pp = s->chain;
			return;
		}
}

void prom_table__expire(struct prom_table *t, uint64_t now_ns)
{
	if (!t->expire_ns || now_ns < t->expire_ns)
		return;
	for (size_t f = 0; f < t->nfams; f++) {
		struct prom_fam_list *fl = &t->fams[f];
		size_t keep = 0;

		for (size_t i = 0; i < fl->n; i++) {
			struct prom_series *s = fl->series[i];

			if (s->fam->own ||
			    s->updated_ns + t->expire_ns > now_ns) {
				fl->series[keep++] = s;
				continue;
			}
			unhash(t, s);
			t->nseries--;
			t->nlimited--;
			series_free(s);
		}
		fl->n = keep;
	}
}

size_t prom_table__count(const struct prom_table *t)
{
	return t->nseries;
}

uint64_t prom_table__dropped(const struct prom_table *t)
{
	return t->dropped;
}

/* --- text --- */

void prom_label(struct strbuf *sb, const char *name, const char *value,
		size_t len)
{
	if (sb->len)
		strbuf__addc(sb, ',');
	strbuf__adds(sb, name);
	strbuf__add(sb, "=\"", 2);
	/* Runs of plain bytes in one copy: most values have no escape. */
	for (size_t i = 0, run = 0; i <= len; i++) {
		char c = i < len ? value[i] : '\0';

		if (i < len && c != '\\' && c != '"' && c != '\n' && c)
			continue;
		strbuf__add(sb, value + run, i - run);
		run = i + 1;
		if (c == '\\' || c == '"') {
			strbuf__addc(sb, '\\');
			strbuf__addc(sb, c);
		} else if (c == '\n') {
			strbuf__add(sb, "\\n", 2);
		}
	}
	strbuf__addc(sb, '"');
}

void prom_add_seconds(struct strbuf *sb, uint64_t ns)
{
	char frac[10];
	int n = 9;
	uint64_t f = ns % 1000000000ULL;

	strbuf__add_u64(sb, ns / 1000000000ULL);
	if (!f)
		return;
	for (int i = 8; i >= 0; i--, f /= 10)
		frac[i] = '0' + f % 10;
	while (frac[n - 1] == '0')
		n--;
	strbuf__addc(sb, '.');
	strbuf__add(sb, frac, n);
}

static void add_value(struct strbuf *out, const struct prom_family *fam,
		      uint64_t v)
{
	if (fam->ns)
		prom_add_seconds(out, v);
	else
		strbuf__add_u64(out, v);
}

/* name{labels} or name{labels,extra} then the value. */
static void sample(struct strbuf *out, const char *name, const char *suffix,
		   const char *labels, const char *extra, uint64_t v,
		   const struct prom_family *fam)
{
	strbuf__adds(out, name);
	strbuf__adds(out, suffix);
	if (labels[0] || extra) {
		strbuf__addc(out, '{');
		strbuf__adds(out, labels);
		if (extra) {
			if (labels[0])
				strbuf__addc(out, ',');
			strbuf__adds(out, extra);
		}
		strbuf__addc(out, '}');
	}
	strbuf__addc(out, ' ');
	if (fam)
		add_value(out, fam, v);
	else
		strbuf__add_u64(out, v);
	strbuf__addc(out, '\n');
}

static void render_histogram(struct strbuf *out, const struct prom_series *s)
{
	static char le[PROM_NLE + 1][32];
	static bool ready;
	uint64_t cum = 0;

	if (!ready) {
		for (int i = 0; i < PROM_NLE; i++) {
			struct strbuf sb = { 0 };

			strbuf__adds(&sb, "le=\"");
			prom_add_seconds(&sb, prom_le_ns[i]);
			strbuf__addc(&sb, '"');
			snprintf(le[i], sizeof(le[i]), "%s", sb.buf);
			strbuf__free(&sb);
		}
		snprintf(le[PROM_NLE], sizeof(le[PROM_NLE]), "le=\"+Inf\"");
		ready = true;
	}
	for (int i = 0; i <= PROM_NLE; i++) {
		cum += s->buckets[i];
		sample(out, s->fam->name, "_bucket", s->labels, le[i], cum,
		       NULL);
	}
	sample(out, s->fam->name, "_sum", s->labels, NULL, s->value, s->fam);
	sample(out, s->fam->name, "_count", s->labels, NULL, s->count, NULL);
}

void prom_table__render(struct prom_table *t, struct strbuf *out)
{
	static const char *types[] = { "counter", "gauge", "histogram" };

	for (size_t f = 0; f < t->nfams; f++) {
		const struct prom_fam_list *fl = &t->fams[f];
		const struct prom_family *fam = fl->fam;

		if (!fl->n)
			continue;
		strbuf__addf(out, "# HELP %s %s\n# TYPE %s %s\n", fam->name,
			     fam->help, fam->name, types[fam->type]);
		for (size_t i = 0; i < fl->n; i++) {
			const struct prom_series *s = fl->series[i];

			if (fam->type == PROM_HISTOGRAM)
				render_histogram(out, s);
			else
				sample(out, fam->name, "", s->labels, NULL,
				       s->value, fam);
		}
	}
}
