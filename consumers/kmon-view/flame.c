// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* flame: offcpu records -> folded stacks -> an SVG flame graph.
 *
 * Each record's stack (innermost first) is reversed to root-first, given a
 * process frame at the bottom (--root), and merged with identical stacks
 * by summing total_ns. The merged stacks are sorted frame by frame, so all
 * stacks sharing a prefix are adjacent and one left-to-right walk lays out
 * every frame: a frame's width is the sum of the stacks under it.
 * --without FUNC leaves out the blocks whose stack holds FUNC: a server's
 * threads wait for their next request far longer than its requests wait
 * for anything, and those waits would hide what delays the requests. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "view.h"

#define FRAME_H 16
#define FONT_SIZE 12
#define CHAR_W (FONT_SIZE * 0.59) /* Verdana's average advance */
#define PAD_X 10
#define PAD_TOP 52
#define PAD_BOTTOM 32
#define MIN_WIDTH_PX 0.1 /* narrower frames are left out, as flamegraph.pl */

/* Interned frame names: a stack is an array of ids. */
struct strtab {
	char **names;
	size_t n, cap;
	uint32_t *slots; /* id + 1; 0 = empty */
	size_t nslots;
};

struct stack {
	uint32_t *ids; /* root first */
	uint32_t n;
	uint64_t ns;
	uint64_t count;
};

struct stacktab {
	struct stack *v;
	size_t n, cap;
	uint32_t *slots; /* index + 1 */
	size_t nslots;
};

struct flame {
	const struct view_opts *o;
	struct strtab names;
	struct stacktab stacks;
	uint64_t records;
	uint64_t ts_min, ts_max;
	uint32_t *scratch; /* the stack being built */
	size_t scratch_cap;
	struct strbuf name; /* the frame name being built */
};

/* A laid-out frame: depth 0 is the "all" frame. */
struct frame {
	uint32_t depth;
	uint32_t id; /* UINT32_MAX for "all" */
	uint64_t start, ns, count;
};

struct layout {
	struct frame *v;
	size_t n, cap;
	uint32_t max_depth;
};

static uint32_t strtab__find_slot(struct strtab *t, const char *s, size_t len)
{
	size_t i = fnv1a(s, len) & (t->nslots - 1);

	while (t->slots[i] && strcmp(t->names[t->slots[i] - 1], s) != 0)
		i = (i + 1) & (t->nslots - 1);
	return (uint32_t)i;
}

static void strtab__grow(struct strtab *t)
{
	size_t i;

	free(t->slots);
	t->nslots = t->nslots ? t->nslots * 2 : 1024;
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));
	for (i = 0; i < t->n; i++)
		t->slots[strtab__find_slot(t, t->names[i], strlen(t->names[i]))] =
			(uint32_t)i + 1;
}

static uint32_t strtab__intern(struct strtab *t, const char *s)
{
	size_t len = strlen(s);
	uint32_t slot;

	if ((t->n + 1) * 2 > t->nslots)
		strtab__grow(t);
	slot = strtab__find_slot(t, s, len);
	if (t->slots[slot])
		return t->slots[slot] - 1;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->names = xrealloc(t->names, t->cap * sizeof(*t->names));
	}
	t->names[t->n] = xstrdup(s);
	t->slots[slot] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

static uint64_t stack_hash(const uint32_t *ids, uint32_t n)
{
	return fnv1a(ids, n * sizeof(*ids));
}

static size_t stacktab__find_slot(struct stacktab *t, const uint32_t *ids,
				  uint32_t n)
{
	size_t i = stack_hash(ids, n) & (t->nslots - 1);

	while (t->slots[i]) {
		struct stack *s = &t->v[t->slots[i] - 1];

		if (s->n == n && memcmp(s->ids, ids, n * sizeof(*ids)) == 0)
			break;
		i = (i + 1) & (t->nslots - 1);
	}
	return i;
}

static void stacktab__grow(struct stacktab *t)
{
	size_t i;

	free(t->slots);
	t->nslots = t->nslots ? t->nslots * 2 : 1024;
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));
	for (i = 0; i < t->n; i++)
		t->slots[stacktab__find_slot(t, t->v[i].ids, t->v[i].n)] =
			(uint32_t)i + 1;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static void stacktab__add(struct stacktab *t, const uint32_t *ids, uint32_t n,
			  uint64_t ns, uint64_t count)
{
	struct stack *s;
	size_t slot;

	if ((t->n + 1) * 2 > t->nslots)
		stacktab__grow(t);
	slot = stacktab__find_slot(t, ids, n);
	if (!t->slots[slot]) {
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 256;
			t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
		}
		s = &t->v[t->n];
		s->ids = xrealloc(NULL, n * sizeof(*ids));
		memcpy(s->ids, ids, n * sizeof(*ids));
		s->n = n;
		s->ns = s->count = 0;
		t->slots[slot] = (uint32_t)++t->n;
	}
	s = &t->v[t->slots[slot] - 1];
	s->ns = sat_add(s->ns, ns);
	s->count = sat_add(s->count, count);
}

/* "do_nanosleep+0x1a" -> "do_nanosleep" unless --offsets, so call sites
 * of one function merge into one frame. ';' separates frames in the
 * folded format and control bytes would break a line, so both are
 * replaced. */
static void frame_name(struct strbuf *sb, const char *s, bool offsets)
{
	size_t len = strlen(s), i;
	const char *plus, *p;

	strbuf__reset(sb);
	if (!offsets) {
		for (plus = NULL, p = s; (p = strstr(p, "+0x")); p++)
			plus = p;
		if (plus && plus > s && plus[3] &&
		    strspn(plus + 3, "0123456789abcdefABCDEF") ==
			    strlen(plus + 3))
			len = (size_t)(plus - s);
	}
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == ';')
			c = ':';
		else if ((unsigned char)c < 0x20)
			c = '?';
		strbuf__addc(sb, c);
	}
	if (!len)
		strbuf__adds(sb, "[unknown]");
}

/* Whether a frame of STACK is one --without names. */
static bool flame__left_out(const struct flame *f,
			    const struct json_value *stack)
{
	size_t i, k;

	for (i = 0; i < stack->arr.n; i++) {
		const char *frame = json__str(&stack->arr.items[i]);
		size_t len = strcspn(frame, "+");

		for (k = 0; k < f->o->nwithout; k++)
			if (strlen(f->o->without[k]) == len &&
			    !strncmp(frame, f->o->without[k], len))
				return true;
	}
	return false;
}

static void flame__push(struct flame *f, size_t *n, const char *name, bool raw)
{
	if (*n == f->scratch_cap) {
		f->scratch_cap = f->scratch_cap ? f->scratch_cap * 2 : 64;
		f->scratch = xrealloc(f->scratch,
				      f->scratch_cap * sizeof(*f->scratch));
	}
	/* process frames keep their text: "+0x" in a comm is no offset */
	frame_name(&f->name, name, raw || f->o->offsets);
	f->scratch[(*n)++] = strtab__intern(&f->names, f->name.buf);
}

/* The process frame at the bottom of the stack, per --root. */
static void flame__push_root(struct flame *f, size_t *n, const char *comm,
			     uint64_t pid, const char *service)
{
	char buf[512];

	switch (f->o->root) {
	case ROOT_COMM:
		flame__push(f, n, comm, true);
		break;
	case ROOT_PID:
		snprintf(buf, sizeof(buf), "%s [%llu]", comm,
			 (unsigned long long)pid);
		flame__push(f, n, buf, true);
		break;
	case ROOT_SERVICE:
		flame__push(f, n, service ? service : "[no service]", true);
		break;
	case ROOT_NONE:
		break;
	}
}

static int flame__record(const struct json_value *rec, const char *kind,
			 const char *where, void *ctx)
{
	struct flame *f = ctx;
	const struct json_value *stack;
	const char *comm, *service;
	uint64_t ts, pid, total, count;
	size_t n = 0, i;
	bool keep;
	int ret;

	ret = filter__check(f->o, rec, kind, where, &keep);
	if (ret || !keep)
		return ret;
	if ((ret = field__u64(rec, kind, where, "pid", &pid)) ||
	    (ret = field__str(rec, kind, where, "comm", &comm)) ||
	    (ret = field__str_or_null(rec, kind, where, "service", &service)) ||
	    (ret = field__array(rec, kind, where, "stack", &stack)) ||
	    (ret = field__u64(rec, kind, where, "total_ns", &total)) ||
	    (ret = field__u64(rec, kind, where, "count", &count)))
		return ret;
	for (i = 0; i < stack->arr.n; i++) {
		if (!json__str(&stack->arr.items[i])) {
			view__error(where,
				    "%s record: \"stack\"[%zu]: expected a "
				    "string, got %s",
				    kind, i,
				    json__type_name(&stack->arr.items[i]));
			return VIEW_BAD_INPUT;
		}
	}
	json__u64(json__get(rec, "ts"), &ts);
	if (!f->records || ts < f->ts_min)
		f->ts_min = ts;
	if (!f->records || ts > f->ts_max)
		f->ts_max = ts;
	f->records++;
	if (!total || flame__left_out(f, stack))
		return 0;

	flame__push_root(f, &n, comm, pid, service);
	if (!stack->arr.n)
		flame__push(f, &n, "[no stack]", true);
	for (i = stack->arr.n; i-- > 0;)
		flame__push(f, &n, json__str(&stack->arr.items[i]), false);
	stacktab__add(&f->stacks, f->scratch, (uint32_t)n, total, count);
	return 0;
}

static int stack_cmp(const void *a, const void *b, void *arg)
{
	const struct stack *x = a, *y = b;
	const struct strtab *names = arg;
	uint32_t i, n = x->n < y->n ? x->n : y->n;
	int c;

	for (i = 0; i < n; i++) {
		if (x->ids[i] == y->ids[i])
			continue;
		c = strcmp(names->names[x->ids[i]], names->names[y->ids[i]]);
		if (c)
			return c;
	}
	return (x->n > y->n) - (x->n < y->n);
}

static void folded__render(const struct flame *f, struct strbuf *out)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < f->stacks.n; i++) {
		const struct stack *s = &f->stacks.v[i];

		for (j = 0; j < s->n; j++) {
			if (j)
				strbuf__addc(out, ';');
			strbuf__adds(out, f->names.names[s->ids[j]]);
		}
		strbuf__addf(out, " %llu\n", (unsigned long long)s->ns);
	}
}

static void layout__emit(struct layout *l, uint32_t depth, uint32_t id,
			 uint64_t start, uint64_t ns, uint64_t count)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = (struct frame){ depth, id, start, ns, count };
	if (depth > l->max_depth)
		l->max_depth = depth;
}

/* One walk over the sorted stacks: a frame opens where its prefix first
 * appears and closes where it last does. */
static void layout__build(const struct flame *f, struct layout *l)
{
	struct frame *open = NULL;
	uint32_t nopen = 0, cap = 0, common, j;
	uint64_t x = 0, all_count = 0;
	const struct stack *prev = NULL;
	size_t i;

	for (i = 0; i < f->stacks.n; i++) {
		const struct stack *s = &f->stacks.v[i];

		for (common = 0; prev && common < prev->n && common < s->n &&
				 prev->ids[common] == s->ids[common];
		     common++)
			;
		while (nopen > common) {
			nopen--;
			layout__emit(l, nopen + 1, open[nopen].id,
				     open[nopen].start, open[nopen].ns,
				     open[nopen].count);
		}
		if (s->n > cap) {
			cap = s->n;
			open = xrealloc(open, cap * sizeof(*open));
		}
		for (; nopen < s->n; nopen++)
			open[nopen] =
				(struct frame){ 0, s->ids[nopen], x, 0, 0 };
		for (j = 0; j < s->n; j++) {
			open[j].ns = sat_add(open[j].ns, s->ns);
			open[j].count = sat_add(open[j].count, s->count);
		}
		x = sat_add(x, s->ns);
		all_count = sat_add(all_count, s->count);
		prev = s;
	}
	while (nopen > 0) {
		nopen--;
		layout__emit(l, nopen + 1, open[nopen].id, open[nopen].start,
			     open[nopen].ns, open[nopen].count);
	}
	layout__emit(l, 0, UINT32_MAX, 0, x, all_count);
	free(open);
}

/* Off-CPU time in cool colours (flamegraph.pl's convention), the process
 * frames green, "all" grey; the hash keeps a name's colour stable. */
static void frame_colour(char *buf, size_t len, const char *name,
			 uint32_t depth, bool process)
{
	uint64_t h = fnv1a(name, strlen(name));
	unsigned a = h & 0xff, b = (h >> 8) & 0xff, c = (h >> 16) & 0xff;

	if (depth == 0)
		snprintf(buf, len, "rgb(200,200,205)");
	else if (process)
		snprintf(buf, len, "rgb(%u,%u,%u)", 110 + a * 50 / 255,
			 190 + b * 40 / 255, 110 + c * 40 / 255);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 70 + a * 80 / 255,
			 140 + b * 70 / 255, 215 + c * 40 / 255);
}

/* The label that fits in w pixels: the name, or its start and "..". */
static void frame_label(struct strbuf *sb, const char *name, double w)
{
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0, len = 0;
	const unsigned char *p = (const unsigned char *)name;
	size_t chars = 0, total = 0;
	char *copy;

	for (; p[total]; total++)
		chars += (p[total] & 0xc0) != 0x80;
	if (fit < 3)
		return;
	if (chars <= fit) {
		svg__escape(sb, name);
		return;
	}
	/* cut at a character boundary, fit - 2 characters, then ".." */
	for (chars = 0; p[len] && chars < fit - 2; len++)
		chars += (p[len] & 0xc0) != 0x80;
	while ((p[len] & 0xc0) == 0x80)
		len++;
	copy = xstrndup(name, len);
	svg__escape(sb, copy);
	strbuf__adds(sb, "..");
	free(copy);
}

/* Click a frame to zoom into it (ancestors stretch to full width, others
 * hide); click the "Reset Zoom" text or press Escape to come back. The
 * frames keep their first geometry in attributes so zooming is exact.
 * FILE.svg#zoom=NAME opens zoomed into the first frame named NAME (a link
 * to share; the tests use it to drive the script). */
static const char flame_js[] =
	"var FULL = 0, PAD = 0, CW = 0;\n"
	"var frames = [], details, unzoom;\n"
	"function fit(g, w) {\n"
	"  var name = g.getAttribute('data-n');\n"
	"  var n = Math.floor((w - 6) / CW);\n"
	"  var t = g.getElementsByTagName('text')[0];\n"
	"  if (n < 3) t.textContent = '';\n"
	"  else if (name.length <= n) t.textContent = name;\n"
	"  else t.textContent = name.slice(0, n - 2) + '..';\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  var r = g.getElementsByTagName('rect')[0];\n"
	"  var t = g.getElementsByTagName('text')[0];\n"
	"  r.setAttribute('x', x.toFixed(2));\n"
	"  r.setAttribute('width', w.toFixed(2));\n"
	"  t.setAttribute('x', (x + 3).toFixed(2));\n"
	"  fit(g, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"  var x0 = z.ox, w0 = z.ow, d0 = z.d, eps = 0.0001;\n"
	"  frames.forEach(function (g) {\n"
	"    var inside = g.ox >= x0 - eps && g.ox + g.ow <= x0 + w0 + eps;\n"
	"    var above = g.ox <= x0 + eps && g.ox + g.ow >= x0 + w0 - eps;\n"
	"    if (g.d < d0 && above) {\n"
	"      g.style.display = ''; g.style.opacity = '0.6';\n"
	"      place(g, PAD, FULL);\n"
	"    } else if (g.d >= d0 && inside) {\n"
	"      g.style.display = ''; g.style.opacity = '';\n"
	"      place(g, PAD + (g.ox - x0) * FULL / w0, g.ow * FULL / w0);\n"
	"    } else {\n"
	"      g.style.display = 'none';\n"
	"    }\n"
	"  });\n"
	"  unzoom.style.display = '';\n"
	"}\n"
	"function reset() {\n"
	"  frames.forEach(function (g) {\n"
	"    g.style.display = ''; g.style.opacity = '';\n"
	"    place(g, g.ox, g.ow);\n"
	"  });\n"
	"  unzoom.style.display = 'none';\n"
	"}\n"
	"window.addEventListener('load', function () {\n"
	"  var root = document.documentElement;\n"
	"  FULL = +root.getAttribute('data-full');\n"
	"  PAD = +root.getAttribute('data-pad');\n"
	"  CW = +root.getAttribute('data-cw');\n"
	"  details = document.getElementById('details');\n"
	"  unzoom = document.getElementById('unzoom');\n"
	"  unzoom.addEventListener('click', reset);\n"
	"  var gs = document.getElementsByTagName('g');\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var g = gs[i];\n"
	"    if (g.getAttribute('class') !== 'f') continue;\n"
	"    var r = g.getElementsByTagName('rect')[0];\n"
	"    g.ox = +r.getAttribute('x'); g.ow = +r.getAttribute('width');\n"
	"    g.d = +g.getAttribute('data-d');\n"
	"    frames.push(g);\n"
	"    g.addEventListener('click', function (e) { zoom(this); });\n"
	"    g.addEventListener('mouseover', function () {\n"
	"      details.textContent = this.getElementsByTagName('title')[0]"
	".textContent;\n"
	"    });\n"
	"    g.addEventListener('mouseout', function () {\n"
	"      details.textContent = ' ';\n"
	"    });\n"
	"  }\n"
	"  document.addEventListener('keydown', function (e) {\n"
	"    if (e.key === 'Escape') reset();\n"
	"  });\n"
	"  var m = /^#zoom=(.*)$/.exec(location.hash);\n"
	"  if (m) {\n"
	"    var want = decodeURIComponent(m[1]);\n"
	"    for (var j = 0; j < frames.length; j++)\n"
	"      if (frames[j].getAttribute('data-n') === want) {\n"
	"        zoom(frames[j]);\n"
	"        break;\n"
	"      }\n"
	"  }\n"
	"  root.setAttribute('data-ready', '1');\n"
	"});\n";

static void svg__frame(struct strbuf *sb, const struct flame *f,
		       const struct frame *fr, uint64_t total, double full,
		       double height, bool has_process_frames)
{
	const char *name = fr->id == UINT32_MAX ? "all" :
						  f->names.names[fr->id];
	double x = PAD_X + (double)fr->start / (double)total * full;
	double w = (double)fr->ns / (double)total * full;
	double y = height - PAD_BOTTOM - (fr->depth + 1.0) * FRAME_H;
	char colour[32], dur[32];

	fmt__duration(dur, sizeof(dur), (double)fr->ns);
	frame_colour(colour, sizeof(colour), name, fr->depth,
		     has_process_frames && fr->depth == 1);
	strbuf__adds(sb, "<g class=\"f\" data-n=\"");
	svg__escape(sb, name);
	strbuf__addf(sb, "\" data-ns=\"%llu\" data-d=\"%u\"><title>",
		     (unsigned long long)fr->ns, fr->depth);
	svg__escape(sb, name);
	strbuf__addf(sb, " (%s off-CPU, %llu blocks, %.2f%%)</title>", dur,
		     (unsigned long long)fr->count,
		     100.0 * (double)fr->ns / (double)total);
	strbuf__addf(sb,
		     "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		     "height=\"%d\" rx=\"2\" fill=\"%s\"/>",
		     x, y, w, FRAME_H - 1, colour);
	strbuf__addf(sb, "<text x=\"%.2f\" y=\"%.1f\">", x + 3,
		     y + FRAME_H - 4.5);
	frame_label(sb, name, w);
	strbuf__adds(sb, "</text></g>\n");
}

static void svg__header(struct strbuf *sb, const struct flame *f, double width,
			double height, uint64_t total)
{
	const struct view_opts *o = f->o;
	char from[32], to[32], dur[32];

	strbuf__addf(
		sb,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"data-full=\"%.2f\" data-pad=\"%d\" data-cw=\"%.3f\">\n",
		width, height, width, height, width - 2 * PAD_X, PAD_X, CHAR_W);
	strbuf__adds(sb, "<style>\n"
			 "text { font-family: Verdana, sans-serif; "
			 "font-size: 12px; fill: #000; }\n"
			 "g.f text { pointer-events: none; }\n"
			 "g.f:hover rect { stroke: #000; stroke-width: 0.5; "
			 "cursor: pointer; }\n"
			 "#title { font-size: 17px; }\n"
			 "#unzoom { cursor: pointer; fill: #1a5fb4; }\n"
			 "</style>\n<script><![CDATA[\n");
	strbuf__adds(sb, flame_js);
	strbuf__adds(sb, "]]></script>\n");
	strbuf__addf(sb,
		     "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
		     "fill=\"#f6f7f9\"/>\n",
		     width, height);
	strbuf__addf(sb,
		     "<text id=\"title\" x=\"%.1f\" y=\"24\" "
		     "text-anchor=\"middle\">",
		     width / 2);
	svg__escape(sb, o->title ? o->title : "Off-CPU time");
	strbuf__adds(sb, "</text>\n");
	fmt__time(from, sizeof(from), f->ts_min, true);
	fmt__time(to, sizeof(to), f->ts_max, true);
	fmt__duration(dur, sizeof(dur), (double)total);
	strbuf__addf(sb,
		     "<text id=\"subtitle\" x=\"%.1f\" y=\"42\" "
		     "text-anchor=\"middle\" fill=\"#555\">",
		     width / 2);
	strbuf__addf(sb, "%s off-CPU in %llu records, %s to %s UTC", dur,
		     (unsigned long long)f->records, from, to);
	if (o->service) {
		strbuf__adds(sb, ", service ");
		svg__escape(sb, o->service);
	}
	if (o->has_pid)
		strbuf__addf(sb, ", pid %llu", (unsigned long long)o->pid);
	strbuf__adds(sb, "</text>\n");
	strbuf__addf(sb,
		     "<text id=\"unzoom\" x=\"%d\" y=\"24\" "
		     "style=\"display:none\">Reset Zoom</text>\n",
		     PAD_X);
	strbuf__addf(sb, "<text id=\"details\" x=\"%d\" y=\"%.0f\"> </text>\n",
		     PAD_X, height - 12);
}

static void svg__render(const struct flame *f, struct strbuf *sb)
{
	struct layout l = { 0 };
	double width = f->o->width, full = width - 2 * PAD_X, height;
	uint64_t total;
	size_t i;

	layout__build(f, &l);
	total = l.v[l.n - 1].ns; /* "all" closes last */
	height = PAD_TOP + (l.max_depth + 1.0) * FRAME_H + PAD_BOTTOM;
	svg__header(sb, f, width, height, total);
	for (i = 0; i < l.n; i++) {
		const struct frame *fr = &l.v[i];

		if ((double)fr->ns / (double)total * full < MIN_WIDTH_PX)
			continue;
		svg__frame(sb, f, fr, total, full, height,
			   f->o->root != ROOT_NONE);
	}
	strbuf__adds(sb, "</svg>\n");
	free(l.v);
}

static void flame__free(struct flame *f)
{
	size_t i;

	for (i = 0; i < f->names.n; i++)
		free(f->names.names[i]);
	free(f->names.names);
	free(f->names.slots);
	for (i = 0; i < f->stacks.n; i++)
		free(f->stacks.v[i].ids);
	free(f->stacks.v);
	free(f->stacks.slots);
	free(f->scratch);
	strbuf__free(&f->name);
}

int flame__run(const struct view_opts *o)
{
	static const char *const kinds[] = { "offcpu", NULL };
	struct flame f = { .o = o };
	struct strbuf out = { 0 };
	int ret;

	ret = input__read(o, kinds, flame__record, &f);
	if (ret)
		goto cleanup;
	if (!f.records) {
		view__error(input__name(o), "no offcpu records%s",
			    filter__suffix(o));
		ret = VIEW_BAD_INPUT;
		goto cleanup;
	}
	if (!f.stacks.n) {
		view__error(input__name(o),
			    "the offcpu records hold no off-CPU time "
			    "(total_ns is 0 in all %llu)",
			    (unsigned long long)f.records);
		ret = VIEW_BAD_INPUT;
		goto cleanup;
	}
	qsort_r(f.stacks.v, f.stacks.n, sizeof(*f.stacks.v), stack_cmp,
		&f.names);
	if (o->folded)
		folded__render(&f, &out);
	else
		svg__render(&f, &out);
	ret = output__write(o, &out);
cleanup:
	strbuf__free(&out);
	flame__free(&f);
	return ret;
}
