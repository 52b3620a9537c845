// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* heatmap: latency over time. x = time (record ts in steps), y = latency
 * in power-of-two rows (log scale), colour = how many blocks (off-CPU) or
 * I/Os fell in the cell.
 *
 * Two forms of input, per source (docs/consumers.md, "kmon-view"):
 *  - histogram records (offcpu_hist / bio_hist): "buckets": [[low_ns,
 *    count], ...]; each bucket lands in the row of its low bound.
 *  - plain records (offcpu / bio): one representative latency per record
 *    (offcpu: total_ns / count; bio: latency_p50_ns), weighted by count.
 * When any histogram record of the source is present the plain records
 * are ignored: both describe the same events and would count them twice. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "lib/array.h"

#define PAD_LEFT 96
#define PAD_RIGHT 150
#define PAD_TOP 64
#define PAD_BOTTOM 64
#define MAX_COLUMNS 1000
#define AUTO_COLUMNS 60 /* the automatic step keeps at most this many */
#define ROWS_MAX 64

struct sample {
	uint64_t ts;
	uint64_t lat; /* ns */
	uint64_t weight;
};

struct samples {
	struct sample *v;
	size_t n, cap;
	uint64_t records;
};

struct heatmap {
	const struct view_opts *o;
	const char *plain_kind, *hist_kind;
	struct samples plain, hist;
};

static void samples__add(struct samples *s, uint64_t ts, uint64_t lat,
			 uint64_t weight)
{
	if (!weight)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = (struct sample){ ts, lat, weight };
}

static unsigned lat_row(uint64_t lat)
{
	unsigned r = 0;

	while (lat > 1) {
		lat >>= 1;
		r++;
	}
	return r;
}

static int heatmap__hist(struct heatmap *h, const struct json_value *rec,
			 const char *kind, const char *where, uint64_t ts)
{
	const struct json_value *buckets, *b;
	uint64_t low, count;
	size_t i;
	int ret;

	ret = field__array(rec, kind, where, "buckets", &buckets);
	if (ret)
		return ret;
	for (i = 0; i < buckets->arr.n; i++) {
		b = &buckets->arr.items[i];
		if (b->type != JSON_ARRAY || b->arr.n != 2 ||
		    !json__u64(&b->arr.items[0], &low) ||
		    !json__u64(&b->arr.items[1], &count)) {
			view__error(where,
				    "%s record: \"buckets\"[%zu]: expected "
				    "[low_ns, count] (two non-negative "
				    "integers)",
				    kind, i);
			return VIEW_BAD_INPUT;
		}
		samples__add(&h->hist, ts, low, count);
	}
	h->hist.records++;
	return 0;
}

static int heatmap__record(const struct json_value *rec, const char *kind,
			   const char *where, void *ctx)
{
	struct heatmap *h = ctx;
	uint64_t ts, count, total, p50;
	bool keep;
	int ret;

	ret = filter__check(h->o, rec, kind, where, &keep);
	if (ret || !keep)
		return ret;
	json__u64(json__get(rec, "ts"), &ts);
	if (strcmp(kind, h->hist_kind) == 0)
		return heatmap__hist(h, rec, kind, where, ts);

	ret = field__u64(rec, kind, where, "count", &count);
	if (ret)
		return ret;
	if (h->o->source == HEAT_OFFCPU) {
		ret = field__u64(rec, kind, where, "total_ns", &total);
		if (ret)
			return ret;
		if (count)
			samples__add(&h->plain, ts, total / count, count);
	} else {
		ret = field__u64(rec, kind, where, "latency_p50_ns", &p50);
		if (ret)
			return ret;
		samples__add(&h->plain, ts, p50, count);
	}
	h->plain.records++;
	return 0;
}

struct grid {
	uint64_t t0, step;
	unsigned ncols, rmin, nrows;
	uint64_t *cells; /* [col * nrows + row - rmin] */
	uint64_t max, total;
};

/* The smallest round step that keeps the picture to AUTO_COLUMNS. */
static uint64_t auto_step(uint64_t span)
{
	static const unsigned steps[] = { 1,	 2,	5,     10,   15,
					  30,	 60,	120,   300,  600,
					  900,	 1800,	3600,  7200, 21600,
					  43200, 86400, 604800 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		uint64_t s = steps[i] * 1000000000ULL;

		if (span / s + 1 <= AUTO_COLUMNS)
			return s;
	}
	return span / (AUTO_COLUMNS - 1) + 1;
}

static int grid__build(struct grid *g, const struct samples *s,
		       const struct view_opts *o)
{
	uint64_t tmin = UINT64_MAX, tmax = 0, span;
	unsigned rmin = ROWS_MAX, rmax = 0, r, c;
	size_t i;

	for (i = 0; i < s->n; i++) {
		r = lat_row(s->v[i].lat);
		tmin = s->v[i].ts < tmin ? s->v[i].ts : tmin;
		tmax = s->v[i].ts > tmax ? s->v[i].ts : tmax;
		rmin = r < rmin ? r : rmin;
		rmax = r > rmax ? r : rmax;
	}
	g->step = o->step_ns ? o->step_ns : auto_step(tmax - tmin);
	g->t0 = tmin / g->step * g->step;
	span = (tmax - g->t0) / g->step + 1;
	if (span > MAX_COLUMNS) {
		view__error(input__name(o),
			    "%llu time columns at this --step (at most %d): "
			    "use a larger --step",
			    (unsigned long long)span, MAX_COLUMNS);
		return VIEW_BAD_INPUT;
	}
	g->ncols = (unsigned)span;
	g->rmin = rmin;
	g->nrows = rmax - rmin + 1;
	g->cells = xcalloc((size_t)g->ncols * g->nrows, sizeof(*g->cells));
	for (i = 0; i < s->n; i++) {
		uint64_t *cell;

		c = (unsigned)((s->v[i].ts - g->t0) / g->step);
		r = lat_row(s->v[i].lat);
		cell = &g->cells[(size_t)c * g->nrows + (r - rmin)];
		*cell = *cell + s->v[i].weight < *cell ? UINT64_MAX :
							 *cell + s->v[i].weight;
		if (*cell > g->max)
			g->max = *cell;
		g->total += s->v[i].weight;
	}
	return 0;
}

/* Yellow -> orange -> red (ColorBrewer YlOrRd), t in [0, 1]. */
static void heat_colour(char *buf, size_t len, double t)
{
	static const unsigned char stops[][3] = { { 254, 217, 118 },
						  { 254, 178, 76 },
						  { 253, 141, 60 },
						  { 240, 59, 32 },
						  { 189, 0, 38 } };
	const int n = ARRAY_SIZE(stops);
	double pos = (t < 0 ? 0 : t > 1 ? 1 : t) * (n - 1);
	int i = (int)pos < n - 1 ? (int)pos : n - 2;
	double f = pos - i;

	snprintf(
		buf, len, "rgb(%d,%d,%d)",
		(int)lround(stops[i][0] + f * (stops[i + 1][0] - stops[i][0])),
		(int)lround(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
		(int)lround(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])));
}

/* Counts span orders of magnitude: the colour follows log(count). */
static double count_t(uint64_t count, uint64_t max)
{
	if (max <= 1)
		return 1;
	return log((double)count) / log((double)max);
}

static void row_bounds(unsigned row, double *lo, double *hi)
{
	*lo = row ? ldexp(1, (int)row) : 0;
	*hi = ldexp(1, (int)row + 1);
}

struct geom {
	double width, height, plot_w, plot_h, cell_w, cell_h;
};

static void svg__cells(struct strbuf *sb, const struct grid *g,
		       const struct geom *ge, const char *unit)
{
	char colour[32], t[32], step[32], lo_s[32], hi_s[32];
	unsigned c, r;

	fmt__duration(step, sizeof(step), (double)g->step);
	for (c = 0; c < g->ncols; c++) {
		for (r = 0; r < g->nrows; r++) {
			uint64_t n = g->cells[(size_t)c * g->nrows + r];
			uint64_t ts = g->t0 + c * g->step;
			double lo, hi;

			if (!n)
				continue;
			row_bounds(g->rmin + r, &lo, &hi);
			heat_colour(colour, sizeof(colour), count_t(n, g->max));
			fmt__time(t, sizeof(t), ts, false);
			fmt__duration(lo_s, sizeof(lo_s), lo);
			fmt__duration(hi_s, sizeof(hi_s), hi);
			strbuf__addf(
				sb,
				"<rect class=\"cell\" x=\"%.2f\" y=\"%.2f\" "
				"width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
				"data-t=\"%llu\" data-lo=\"%.0f\" "
				"data-hi=\"%.0f\" data-count=\"%llu\">"
				"<title>%s + %s, %s to %s: %llu %s</title>"
				"</rect>\n",
				PAD_LEFT + c * ge->cell_w,
				PAD_TOP + ge->plot_h - (r + 1) * ge->cell_h,
				ge->cell_w, ge->cell_h, colour,
				(unsigned long long)ts, lo, hi,
				(unsigned long long)n, t, step, lo_s, hi_s,
				(unsigned long long)n, unit);
		}
	}
}

static void svg__axes(struct strbuf *sb, const struct grid *g,
		      const struct geom *ge, const char *ylabel)
{
	double x, y, lo, hi, every;
	char buf[32], date[32];
	unsigned c, r, k;

	/* y: the bound between rows; thin rows label every other one */
	k = ge->cell_h < 13 ? 2 : 1;
	for (r = 0; r <= g->nrows; r++) {
		if (r % k && r != g->nrows)
			continue;
		row_bounds(g->rmin + r, &lo, &hi);
		y = PAD_TOP + ge->plot_h - r * ge->cell_h;
		fmt__duration(buf, sizeof(buf), lo);
		strbuf__addf(sb,
			     "<line class=\"tick\" x1=\"%d\" y1=\"%.2f\" "
			     "x2=\"%d\" y2=\"%.2f\" stroke=\"#333\"/>"
			     "<text class=\"ylabel\" x=\"%d\" y=\"%.2f\" "
			     "text-anchor=\"end\">%s</text>\n",
			     PAD_LEFT - 5, y, PAD_LEFT, y, PAD_LEFT - 8, y + 4,
			     buf);
	}
	/* x: labels at least 80 px apart */
	every = ceil(80 / ge->cell_w);
	for (c = 0; c <= g->ncols; c += (unsigned)every) {
		x = PAD_LEFT + c * ge->cell_w;
		fmt__time(buf, sizeof(buf), g->t0 + c * g->step, false);
		strbuf__addf(sb,
			     "<line class=\"tick\" x1=\"%.2f\" y1=\"%.2f\" "
			     "x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>"
			     "<text class=\"xlabel\" x=\"%.2f\" y=\"%.2f\" "
			     "text-anchor=\"middle\">%s</text>\n",
			     x, PAD_TOP + ge->plot_h, x,
			     PAD_TOP + ge->plot_h + 5, x,
			     PAD_TOP + ge->plot_h + 19, buf);
	}
	strbuf__addf(sb,
		     "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.2f\" "
		     "stroke=\"#333\"/><line x1=\"%d\" y1=\"%.2f\" "
		     "x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>\n",
		     PAD_LEFT, PAD_TOP, PAD_LEFT, PAD_TOP + ge->plot_h,
		     PAD_LEFT, PAD_TOP + ge->plot_h, PAD_LEFT + ge->plot_w,
		     PAD_TOP + ge->plot_h);
	fmt__time(date, sizeof(date), g->t0, true);
	fmt__duration(buf, sizeof(buf), (double)g->step);
	strbuf__addf(sb,
		     "<text id=\"xaxis\" x=\"%.2f\" y=\"%.2f\" "
		     "text-anchor=\"middle\">time (UTC, from %s; one column "
		     "= %s)</text>\n",
		     PAD_LEFT + ge->plot_w / 2, PAD_TOP + ge->plot_h + 42, date,
		     buf);
	strbuf__addf(
		sb,
		"<text id=\"yaxis\" x=\"0\" y=\"0\" text-anchor=\"middle\" "
		"transform=\"translate(18,%.2f) rotate(-90)\">%s "
		"(log scale)</text>\n",
		PAD_TOP + ge->plot_h / 2, ylabel);
}

/* Swatches for counts spread evenly on the log scale, deduplicated. */
static void svg__legend(struct strbuf *sb, const struct grid *g,
			const struct geom *ge, const char *unit)
{
	double x = PAD_LEFT + ge->plot_w + 24, y = PAD_TOP;
	uint64_t prev = 0, v;
	char colour[32], label[32];
	int i, n = g->max < 6 ? (int)g->max : 6;

	strbuf__addf(sb,
		     "<text id=\"legend\" x=\"%.2f\" y=\"%.2f\">%s per cell"
		     "</text>\n",
		     x, y + 10, unit);
	for (i = 0; i < n; i++) {
		double t = n > 1 ? (double)i / (n - 1) : 1;

		v = g->max <= 6 ? (uint64_t)i + 1 :
				  (uint64_t)llround(pow((double)g->max, t));
		if (v <= prev)
			continue;
		prev = v;
		heat_colour(colour, sizeof(colour), count_t(v, g->max));
		fmt__count(label, sizeof(label), (double)v);
		y += 22;
		strbuf__addf(sb,
			     "<rect class=\"swatch\" x=\"%.2f\" y=\"%.2f\" "
			     "width=\"18\" height=\"18\" fill=\"%s\" "
			     "data-count=\"%llu\"/><text x=\"%.2f\" "
			     "y=\"%.2f\">%s</text>\n",
			     x, y, colour, (unsigned long long)v, x + 26,
			     y + 14, label);
	}
}

static void svg__render(const struct heatmap *h, const struct grid *g,
			bool from_hist, size_t records, struct strbuf *sb)
{
	const struct view_opts *o = h->o;
	bool offcpu = o->source == HEAT_OFFCPU;
	const char *unit = offcpu ? "blocks" : "I/Os";
	struct geom ge;
	char total[32];

	ge.width = o->width;
	ge.plot_w = ge.width - PAD_LEFT - PAD_RIGHT;
	ge.cell_w = ge.plot_w / g->ncols;
	ge.cell_h = 360.0 / g->nrows;
	ge.cell_h = ge.cell_h < 10 ? 10 : ge.cell_h > 28 ? 28 : ge.cell_h;
	ge.plot_h = ge.cell_h * g->nrows;
	ge.height = PAD_TOP + ge.plot_h + PAD_BOTTOM;

	strbuf__addf(
		sb,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
		"<style>text { font-family: Verdana, sans-serif; "
		"font-size: 12px; fill: #222; } #title { font-size: 17px; }"
		" rect.cell:hover { stroke: #000; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
		"fill=\"#ffffff\"/>\n"
		"<rect id=\"plot\" x=\"%d\" y=\"%d\" width=\"%.2f\" "
		"height=\"%.2f\" fill=\"#eef0f3\"/>\n",
		ge.width, ge.height, ge.width, ge.height, ge.width, ge.height,
		PAD_LEFT, PAD_TOP, ge.plot_w, ge.plot_h);
	strbuf__addf(sb,
		     "<text id=\"title\" x=\"%.1f\" y=\"24\" "
		     "text-anchor=\"middle\">",
		     ge.width / 2);
	svg__escape(sb, o->title ? o->title :
			offcpu	 ? "Off-CPU time heatmap" :
				   "Block I/O latency heatmap");
	fmt__count(total, sizeof(total), (double)g->total);
	strbuf__addf(sb,
		     "</text>\n<text id=\"subtitle\" x=\"%.1f\" y=\"44\" "
		     "text-anchor=\"middle\" fill=\"#555\">%s %s from %zu %s "
		     "records%s</text>\n",
		     ge.width / 2, total, unit, records,
		     from_hist ? h->hist_kind : h->plain_kind,
		     from_hist ? "" :
		     offcpu    ? " (latency = total_ns / count per record)" :
				 " (latency = latency_p50_ns per record)");
	svg__cells(sb, g, &ge, unit);
	svg__axes(sb, g, &ge,
		  offcpu ? "off-CPU duration per block" : "I/O latency");
	svg__legend(sb, g, &ge, unit);
	strbuf__adds(sb, "</svg>\n");
}

int heatmap__run(const struct view_opts *o)
{
	struct heatmap h = { .o = o };
	const char *kinds[3];
	struct grid g = { 0 };
	struct strbuf out = { 0 };
	const struct samples *s;
	int ret;

	h.plain_kind = o->source == HEAT_OFFCPU ? "offcpu" : "bio";
	h.hist_kind = o->source == HEAT_OFFCPU ? "offcpu_hist" : "bio_hist";
	kinds[0] = h.plain_kind;
	kinds[1] = h.hist_kind;
	kinds[2] = NULL;
	ret = input__read(o, kinds, heatmap__record, &h);
	if (ret)
		goto cleanup;
	s = h.hist.records ? &h.hist : &h.plain;
	if (!s->records) {
		view__error(input__name(o), "no %s or %s records%s",
			    h.plain_kind, h.hist_kind, filter__suffix(o));
		ret = VIEW_BAD_INPUT;
		goto cleanup;
	}
	if (!s->n) {
		view__error(input__name(o),
			    "the %s records count no events (count 0 in all "
			    "%llu)",
			    h.hist.records ? h.hist_kind : h.plain_kind,
			    (unsigned long long)s->records);
		ret = VIEW_BAD_INPUT;
		goto cleanup;
	}
	ret = grid__build(&g, s, o);
	if (ret)
		goto cleanup;
	svg__render(&h, &g, s == &h.hist, s->records, &out);
	ret = output__write(o, &out);
cleanup:
	free(g.cells);
	free(h.plain.v);
	free(h.hist.v);
	strbuf__free(&out);
	return ret;
}
