// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* load: `load` and `occupancy` records -> an SVG of how busy each service
 * was over time, one panel per service: its measured busy fraction and
 * occupancy (requests in progress, time-averaged), and the estimated
 * utilization of each of its hidden tiers (the `rho` of its per-interval
 * occupancy records; a gap where the fit did not hold). Busy and rho are
 * fractions, on the left scale 0..1; occupancy (any number of requests)
 * has its own scale on the right, from 0 to the panel's highest, rounded
 * up. Load records with request outcomes (docs/design/outcomes.md) add
 * the fraction of each interval's requests that failed (errors /
 * outcomes, on the left scale; a gap where no outcome was known) and the
 * panel's error count in the legend.
 *
 * Every point is a <circle> with data-ts (ns) and data-v, inside a <g>
 * with data-service and data-series (busy, occupancy, rho1, rho2, ...,
 * errors),
 * so tests and scripts can read the picture back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumers/common/percent.h"
#include "view.h"

#define MAX_TIERS 4

/* The series of a panel, in the order they are drawn. */
enum {
	S_BUSY,
	S_OCCUPANCY,
	S_RHO1, /* .. rho4 */
	S_ERRORS = S_RHO1 + MAX_TIERS,
	MAX_SERIES,
};
#define PANEL_H 200
#define PAD_L 60
#define PAD_R 200
#define PAD_T 40

struct point {
	uint64_t ts;
	double v; /* NAN: no value (a gap) */
};

struct series {
	struct point *p;
	size_t n, cap;
};

struct svc {
	char *name;
	struct series s[MAX_SERIES];
	double occ_max; /* the top of the right scale */
	uint64_t outcomes, errors; /* summed over its load records */
};

struct load_view {
	const struct view_opts *o;
	struct svc *svcs;
	size_t n, cap;
	uint64_t t0, t1;
	uint64_t records;
};

static const char *series_name[MAX_SERIES] = { "busy",	"occupancy", "rho1",
					       "rho2",	"rho3",	     "rho4",
					       "errors" };
static const char *series_color[MAX_SERIES] = { "#1f77b4", "#7f7f7f", "#d62728",
						"#ff7f0e", "#2ca02c", "#9467bd",
						"#8c564b" };

static struct svc *svc_of(struct load_view *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->svcs[i].name, name) == 0)
			return &l->svcs[i];
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->svcs = xrealloc(l->svcs, l->cap * sizeof(*l->svcs));
	}
	memset(&l->svcs[l->n], 0, sizeof(l->svcs[l->n]));
	l->svcs[l->n].name = xstrdup(name);
	return &l->svcs[l->n++];
}

static void add_point(struct series *s, uint64_t ts, double v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->p = xrealloc(s->p, s->cap * sizeof(*s->p));
	}
	s->p[s->n++] = (struct point){ ts, v };
}

static int number(const struct json_value *rec, const char *kind,
		  const char *where, const char *key, double *out)
{
	if (json__double(json__get(rec, key), out) && isfinite(*out) &&
	    *out >= 0)
		return 0;
	view__error(where, "%s: %s: expected a number >= 0", kind, key);
	return VIEW_BAD_INPUT;
}

/* The service a record is about; a load record of a process without a
 * service is named by its pid; one of the client side by the endpoint
 * called. */
static int name_of(const struct json_value *rec, const char *kind,
		   const char *where, char *buf, size_t len)
{
	const struct json_value *endpoint = json__get(rec, "endpoint");
	const char *service;
	uint64_t pid;
	int ret;

	if (endpoint && endpoint->type == JSON_STRING) {
		snprintf(buf, len, "%s", endpoint->str.s);
		return 0;
	}
	ret = field__str_or_null(rec, kind, where, "service", &service);
	if (ret)
		return ret;
	if (service) {
		snprintf(buf, len, "%s", service);
		return 0;
	}
	ret = field__u64(rec, kind, where, "pid", &pid);
	if (!ret)
		snprintf(buf, len, "pid:%llu", (unsigned long long)pid);
	return ret;
}

static int load_record(const struct json_value *rec, const char *kind,
		       const char *where, uint64_t ts, struct svc *s)
{
	uint64_t outcomes, errors;
	double busy, occ;
	bool has_outcomes;
	int ret;

	if ((ret = number(rec, kind, where, "busy", &busy)) ||
	    (ret = number(rec, kind, where, "occupancy", &occ)) ||
	    (ret = field__outcomes(rec, kind, where, &has_outcomes, &outcomes,
				   &errors)))
		return ret;
	if (errors > outcomes) {
		view__error(where, "%s: errors: %llu of %llu outcomes", kind,
			    (unsigned long long)errors,
			    (unsigned long long)outcomes);
		return VIEW_BAD_INPUT;
	}
	if (busy > 1) {
		view__error(where, "%s: busy: %g is above 1", kind, busy);
		return VIEW_BAD_INPUT;
	}
	add_point(&s->s[S_BUSY], ts, busy);
	add_point(&s->s[S_OCCUPANCY], ts, occ);
	if (occ > s->occ_max)
		s->occ_max = occ;
	/* a kmond before outcomes: no errors series at all */
	if (has_outcomes)
		add_point(&s->s[S_ERRORS], ts,
			  outcomes ? (double)errors / (double)outcomes : NAN);
	s->outcomes += outcomes;
	s->errors += errors;
	return 0;
}

static int occupancy_record(const struct json_value *rec, const char *kind,
			    const char *where, uint64_t ts, struct svc *s)
{
	const struct json_value *rho = json__get(rec, "rho");
	const char *scope;
	uint64_t tiers;
	size_t i;
	double v;
	int ret;

	if ((ret = field__str(rec, kind, where, "scope", &scope)) ||
	    (ret = field__u64(rec, kind, where, "tiers", &tiers)))
		return ret;
	if (tiers < 1 || tiers > MAX_TIERS) {
		view__error(where, "%s: tiers: %llu is not 1 to %d", kind,
			    (unsigned long long)tiers, MAX_TIERS);
		return VIEW_BAD_INPUT;
	}
	/* windows overlap the intervals they are made of */
	if (strcmp(scope, "interval") != 0)
		return 0;
	if (!rho || rho->type == JSON_NULL) {
		for (i = 0; i < tiers; i++)
			add_point(&s->s[S_RHO1 + i], ts, NAN);
		return 0;
	}
	if ((ret = field__array(rec, kind, where, "rho", &rho)))
		return ret;
	if (rho->arr.n != tiers) {
		view__error(where, "%s: rho: %zu values for %llu tiers", kind,
			    rho->arr.n, (unsigned long long)tiers);
		return VIEW_BAD_INPUT;
	}
	for (i = 0; i < tiers; i++) {
		if (!json__double(&rho->arr.items[i], &v) || !(v >= 0) ||
		    v > 1) {
			view__error(where, "%s: rho: expected numbers 0 to 1",
				    kind);
			return VIEW_BAD_INPUT;
		}
		add_point(&s->s[S_RHO1 + i], ts, v);
	}
	return 0;
}

static int load_view__record(const struct json_value *rec, const char *kind,
			     const char *where, void *ctx)
{
	struct load_view *l = ctx;
	char name[256];
	uint64_t ts;
	bool keep;
	int ret = filter__check(l->o, rec, kind, where, &keep);

	if (ret || !keep)
		return ret;
	if ((ret = name_of(rec, kind, where, name, sizeof(name))))
		return ret;
	json__u64(json__get(rec, "ts"), &ts);
	if (!l->records || ts < l->t0)
		l->t0 = ts;
	if (!l->records || ts > l->t1)
		l->t1 = ts;
	l->records++;
	if (strcmp(kind, "load") == 0)
		return load_record(rec, kind, where, ts, svc_of(l, name));
	return occupancy_record(rec, kind, where, ts, svc_of(l, name));
}

static int point_cmp(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

static bool estimated(int k)
{
	return k >= S_RHO1 && k < S_RHO1 + MAX_TIERS;
}

/* The legend's line of series k. */
static void legend(const struct svc *svc, int k, struct strbuf *out)
{
	char pct[32];

	strbuf__adds(out, series_name[k]);
	if (k == S_OCCUPANCY) /* its own scale */
		strbuf__addf(out, " (0 to %g)", svc->occ_max);
	if (k == S_ERRORS) {
		percent__format(pct, sizeof(pct),
				svc->outcomes ? (double)svc->errors /
							(double)svc->outcomes :
						0);
		strbuf__addf(out, " (%llu of %llu, %s)",
			     (unsigned long long)svc->errors,
			     (unsigned long long)svc->outcomes, pct);
	}
	strbuf__adds(out, estimated(k) ? " estimated" : " measured");
}

static void render_series(const struct load_view *l, const struct svc *svc,
			  int k, double y0, double h, struct strbuf *out)
{
	const struct series *s = &svc->s[k];
	double w = l->o->width - PAD_L - PAD_R;
	double top = k == S_OCCUPANCY ? svc->occ_max : 1;
	double span = l->t1 > l->t0 ? (double)(l->t1 - l->t0) : 1;
	bool open = false;

	if (!s->n)
		return;
	qsort(s->p, s->n, sizeof(*s->p), point_cmp);
	strbuf__adds(out, "<g class=\"series\" data-service=\"");
	svg__escape(out, svc->name);
	strbuf__addf(out, "\" data-series=\"%s\" stroke=\"%s\" fill=\"%s\">\n",
		     series_name[k], series_color[k], series_color[k]);
	/* a polyline per run of values, broken where a fit did not hold */
	for (size_t i = 0; i <= s->n; i++) {
		bool gap = i == s->n || isnan(s->p[i].v);

		if (open && gap) {
			strbuf__adds(out, "\"/>\n");
			open = false;
		}
		if (gap)
			continue;
		if (!open) {
			strbuf__addf(out, "<polyline fill=\"none\"%s points=\"",
				     estimated(k) ?
					     " stroke-dasharray=\"6,3\"" :
					     "");
			open = true;
		}
		strbuf__addf(out, "%.1f,%.1f ",
			     PAD_L + w * (double)(s->p[i].ts - l->t0) / span,
			     y0 + h - h * s->p[i].v / top);
	}
	for (size_t i = 0; i < s->n; i++) {
		if (isnan(s->p[i].v))
			continue;
		strbuf__addf(out,
			     "<circle r=\"2.5\" cx=\"%.1f\" cy=\"%.1f\" "
			     "data-ts=\"%llu\" data-v=\"%g\"/>\n",
			     PAD_L + w * (double)(s->p[i].ts - l->t0) / span,
			     y0 + h - h * s->p[i].v / top,
			     (unsigned long long)s->p[i].ts, s->p[i].v);
	}
	strbuf__adds(out, "</g>\n");
}

static void render(struct load_view *l, struct strbuf *out)
{
	unsigned width = l->o->width;
	double h = PANEL_H - 50;
	char t0[64], t1[64];

	fmt__time(t0, sizeof(t0), l->t0, true);
	fmt__time(t1, sizeof(t1), l->t1, true);
	strbuf__addf(out,
		     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
		     "height=\"%zu\" font-family=\"sans-serif\" "
		     "font-size=\"12\">\n"
		     "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		     "<text x=\"%d\" y=\"20\" font-size=\"16\">",
		     width, PAD_T + l->n * PANEL_H, PAD_L);
	svg__escape(out, l->o->title ? l->o->title :
				       "Load: measured busy and occupancy, "
				       "estimated tiers");
	strbuf__adds(out, "</text>\n");
	for (size_t i = 0; i < l->n; i++) {
		struct svc *svc = &l->svcs[i];
		double y0 = PAD_T + i * PANEL_H + 20;
		int lines = 0;

		/* whole steps, so the right scale reads easily */
		svc->occ_max = svc->occ_max <= 1 ? 1 : ceil(svc->occ_max);
		strbuf__addf(out,
			     "<text class=\"panel\" x=\"%d\" y=\"%.0f\" "
			     "font-weight=\"bold\">",
			     PAD_L, y0 - 6);
		svg__escape(out, svc->name);
		strbuf__addf(out,
			     "</text>\n<rect x=\"%d\" y=\"%.0f\" width=\"%u\" "
			     "height=\"%.0f\" fill=\"none\" stroke=\"#ccc\"/>\n"
			     "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">"
			     "1</text>\n<text x=\"%d\" y=\"%.0f\" "
			     "text-anchor=\"end\">0</text>\n"
			     "<text x=\"%d\" y=\"%.0f\">%s</text>\n"
			     "<text x=\"%u\" y=\"%.0f\" text-anchor=\"end\">"
			     "%s</text>\n",
			     PAD_L, y0, width - PAD_L - PAD_R, h, PAD_L - 4,
			     y0 + 4, PAD_L - 4, y0 + h, PAD_L, y0 + h + 16, t0,
			     width - PAD_R, y0 + h + 16, t1);
		for (int k = 0; k < MAX_SERIES; k++) {
			if (!svc->s[k].n)
				continue;
			render_series(l, svc, k, y0, h, out);
			strbuf__addf(
				out,
				"<text class=\"legend\" data-series=\"%s\" "
				"x=\"%u\" y=\"%.0f\" fill=\"%s\">",
				series_name[k], width - PAD_R + 10,
				y0 + 12 + 16 * lines++, series_color[k]);
			legend(svc, k, out);
			strbuf__adds(out, "</text>\n");
		}
	}
	strbuf__adds(out, "</svg>\n");
}

int load__run(const struct view_opts *o)
{
	static const char *const kinds[] = { "load", "occupancy", NULL };
	struct load_view l = { .o = o };
	struct strbuf out = { 0 };
	int ret = input__read(o, kinds, load_view__record, &l);

	if (!ret && !l.records) {
		view__error(input__name(o), "no load or occupancy records%s",
			    o->service || o->has_from || o->has_to ?
				    " match the filters" :
				    "");
		ret = VIEW_BAD_INPUT;
	}
	if (!ret) {
		render(&l, &out);
		ret = output__write(o, &out);
	}
	for (size_t i = 0; i < l.n; i++) {
		for (int k = 0; k < MAX_SERIES; k++)
			free(l.svcs[i].s[k].p);
		free(l.svcs[i].name);
	}
	free(l.svcs);
	strbuf__free(&out);
	return ret;
}
