// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Recursive descent over RFC 8259's grammar. Every rejection names what
 * was expected, and the position is turned into line:col only on error so
 * the hot path tracks a single offset. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/json_lex.h"
#include "lib/json_parse.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

struct parser {
	const unsigned char *p; /* next byte */
	const unsigned char *start;
	const unsigned char *end;
	int depth;
	struct json_error *err;
	bool failed;
};

static void fail_at(struct parser *ps, const unsigned char *at, const char *fmt,
		    ...) __attribute__((format(printf, 3, 4)));

static void fail_at(struct parser *ps, const unsigned char *at, const char *fmt,
		    ...)
{
	struct json_error *err = ps->err;
	va_list ap;

	if (ps->failed)
		return;
	ps->failed = true;
	if (!err)
		return;
	va_start(ap, fmt);
	json__verror(err, (const char *)ps->start, (size_t)(at - ps->start),
		     fmt, ap);
	va_end(ap);
}

void json__verror(struct json_error *err, const char *text, size_t offset,
		  const char *fmt, va_list ap)
{
	const char *q;

	err->offset = offset;
	err->line = 1;
	err->col = 1;
	for (q = text; q < text + offset; q++) {
		if (*q == '\n') {
			err->line++;
			err->col = 1;
		} else {
			err->col++;
		}
	}
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

static void fail_unexpected(struct parser *ps, const char *expected)
{
	char buf[16];

	fail_at(ps, ps->p, "expected %s, got %s", expected,
		json_lex__describe(ps->p, ps->end, buf, sizeof(buf)));
}

static void skip_ws(struct parser *ps)
{
	ps->p = json_lex__skip_ws(ps->p, ps->end);
}

static bool parse_value(struct parser *ps, struct json_value *v);

static bool parse_literal(struct parser *ps, struct json_value *v)
{
	static const struct {
		const char *word;
		enum json_type type;
		bool b;
	} lits[] = {
		{ "null", JSON_NULL, false },
		{ "true", JSON_BOOL, true },
		{ "false", JSON_BOOL, false },
	};
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(lits); i++) {
		n = strlen(lits[i].word);
		if ((size_t)(ps->end - ps->p) >= n &&
		    memcmp(ps->p, lits[i].word, n) == 0) {
			ps->p += n;
			v->type = lits[i].type;
			v->b = lits[i].b;
			return true;
		}
	}
	fail_unexpected(ps, "a value");
	return false;
}

static bool parse_number(struct parser *ps, struct json_value *v)
{
	struct json_lex_number n;
	struct json_lex_error lerr;
	const unsigned char *p;

	p = json_lex__number(ps->p, ps->end, &n, &lerr);
	if (!p) {
		ps->p = lerr.at;
		if (lerr.expected)
			fail_unexpected(ps, lerr.expected);
		else
			fail_at(ps, lerr.at, "%s", lerr.msg);
		return false;
	}
	ps->p = p;
	v->type = JSON_INT;
	if (n.integral && n.fits && !n.negative &&
	    n.magnitude <= (uint64_t)INT64_MAX) {
		v->i = (int64_t)n.magnitude;
	} else if (n.integral && n.fits && !n.negative) {
		v->type = JSON_UINT;
		v->u = n.magnitude;
	} else if (n.integral && n.fits &&
		   n.magnitude <= (uint64_t)INT64_MAX + 1) {
		v->i = (int64_t)(0 - n.magnitude);
	} else {
		v->type = JSON_DOUBLE;
		v->d = n.integral && n.fits ? -(double)n.magnitude : n.d;
	}
	return true;
}

static int hex4(const unsigned char *p, const unsigned char *end)
{
	int v = 0, i;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		unsigned char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The \uXXXX escape at p (p at the 'u'), a surrogate pair included;
 * advances *pp past it. Returns the code point or -1 (error reported). */
static long parse_u_escape(struct parser *ps, const unsigned char **pp)
{
	const unsigned char *p = *pp, *at = p - 1;
	int hi = hex4(p + 1, ps->end), lo;

	if (hi < 0) {
		fail_at(ps, at, "invalid \\u escape: expected 4 hex digits");
		return -1;
	}
	p += 5;
	if (hi >= 0xdc00 && hi <= 0xdfff) {
		fail_at(ps, at, "lone low surrogate \\u%04x", hi);
		return -1;
	}
	if (hi >= 0xd800 && hi <= 0xdbff) {
		if (ps->end - p < 2 || p[0] != '\\' || p[1] != 'u' ||
		    (lo = hex4(p + 2, ps->end)) < 0xdc00 || lo > 0xdfff) {
			fail_at(ps, at,
				"high surrogate \\u%04x not followed by a low "
				"surrogate",
				hi);
			return -1;
		}
		p += 6;
		*pp = p;
		return 0x10000 + (((long)hi - 0xd800) << 10) + (lo - 0xdc00);
	}
	*pp = p;
	return hi;
}

static char escape_char(unsigned char c)
{
	switch (c) {
	case '"':
		return '"';
	case '\\':
		return '\\';
	case '/':
		return '/';
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	}
	return 0;
}

/* ps->p at the opening quote. The decoded string is never longer than
 * its source, so one allocation of the source length suffices. */
static bool parse_string(struct parser *ps, char **out, size_t *out_len)
{
	const unsigned char *p = ps->p + 1, *q;
	char *buf, *w;
	uint32_t ucp;
	size_t n;
	long cp;

	for (q = p; q < ps->end && *q != '"'; q++)
		if (*q == '\\' && q + 1 < ps->end)
			q++;
	w = buf = xrealloc(NULL, (size_t)(q - p) + 1);
	while (p < ps->end && *p != '"') {
		if (*p == '\\') {
			if (p + 1 >= ps->end)
				break;
			if (p[1] == 'u') {
				p++;
				cp = parse_u_escape(ps, &p);
				if (cp < 0)
					goto fail;
				w += utf8_put(w, (uint32_t)cp);
				continue;
			}
			if (!escape_char(p[1])) {
				char d[16];

				fail_at(ps, p, "invalid escape \\%s",
					json_lex__describe(p + 1, ps->end, d,
							   sizeof(d)));
				goto fail;
			}
			*w++ = escape_char(p[1]);
			p += 2;
			continue;
		}
		if (*p < 0x20) {
			fail_at(ps, p,
				"control byte 0x%02x in a string (escape it)",
				*p);
			goto fail;
		}
		n = utf8__seq_len(p, (size_t)(ps->end - p), &ucp);
		if (!n) {
			fail_at(ps, p, "invalid UTF-8 in a string");
			goto fail;
		}
		memcpy(w, p, n);
		w += n;
		p += n;
	}
	if (p >= ps->end || *p != '"') {
		fail_at(ps, ps->p, "unterminated string");
		goto fail;
	}
	*w = '\0';
	ps->p = p + 1;
	*out = buf;
	*out_len = (size_t)(w - buf);
	return true;
fail:
	free(buf);
	return false;
}

static bool parse_array(struct parser *ps, struct json_value *v)
{
	size_t cap = 0;

	v->type = JSON_ARRAY;
	v->arr.items = NULL;
	v->arr.n = 0;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return true;
	}
	for (;;) {
		if (v->arr.n == cap) {
			cap = cap ? cap * 2 : 4;
			v->arr.items = xrealloc(v->arr.items,
						cap * sizeof(*v->arr.items));
		}
		/* counted first so a failed item is freed with the array */
		if (!parse_value(ps, &v->arr.items[v->arr.n++]))
			return false;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			return true;
		}
		fail_unexpected(ps, "',' or ']' in an array");
		return false;
	}
}

static bool has_key(const struct json_value *obj, const char *key, size_t len)
{
	size_t i;

	for (i = 0; i < obj->obj.n; i++)
		if (obj->obj.members[i].key_len == len &&
		    memcmp(obj->obj.members[i].key, key, len) == 0)
			return true;
	return false;
}

static bool parse_member(struct parser *ps, struct json_value *obj)
{
	struct json_member *m = &obj->obj.members[obj->obj.n];
	const unsigned char *key_at;

	skip_ws(ps);
	if (ps->p >= ps->end || *ps->p != '"') {
		fail_unexpected(ps, "a string key in an object");
		return false;
	}
	key_at = ps->p;
	if (!parse_string(ps, &m->key, &m->key_len))
		return false;
	m->value.type = JSON_NULL;
	if (has_key(obj, m->key, m->key_len)) {
		fail_at(ps, key_at, "duplicate key \"%.60s\"", m->key);
		free(m->key);
		return false;
	}
	obj->obj.n++; /* owned from here on, freed with the object */
	skip_ws(ps);
	if (ps->p >= ps->end || *ps->p != ':') {
		fail_unexpected(ps, "':' after an object key");
		return false;
	}
	ps->p++;
	return parse_value(ps, &m->value);
}

static bool parse_object(struct parser *ps, struct json_value *v)
{
	size_t cap = 0;

	v->type = JSON_OBJECT;
	v->obj.members = NULL;
	v->obj.n = 0;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return true;
	}
	for (;;) {
		if (v->obj.n == cap) {
			cap = cap ? cap * 2 : 8;
			v->obj.members = xrealloc(
				v->obj.members, cap * sizeof(*v->obj.members));
		}
		if (!parse_member(ps, v))
			return false;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			return true;
		}
		fail_unexpected(ps, "',' or '}' in an object");
		return false;
	}
}

/* On failure v is still a valid (partial) tree that json__free can free. */
static bool parse_value(struct parser *ps, struct json_value *v)
{
	bool ok;

	v->type = JSON_NULL;
	skip_ws(ps);
	if (ps->p >= ps->end) {
		fail_unexpected(ps, "a value");
		return false;
	}
	switch (*ps->p) {
	case '{':
	case '[':
		if (++ps->depth > JSON_MAX_DEPTH) {
			fail_at(ps, ps->p, "nesting deeper than %d",
				JSON_MAX_DEPTH);
			return false;
		}
		ok = *ps->p == '{' ? parse_object(ps, v) : parse_array(ps, v);
		ps->depth--;
		return ok;
	case '"':
		if (!parse_string(ps, &v->str.s, &v->str.len))
			return false;
		v->type = JSON_STRING;
		return true;
	case '-':
	case '0' ... '9':
		return parse_number(ps, v);
	default:
		return parse_literal(ps, v);
	}
}

static void json__free_children(struct json_value *v)
{
	size_t i;

	switch (v->type) {
	case JSON_STRING:
		free(v->str.s);
		break;
	case JSON_ARRAY:
		for (i = 0; i < v->arr.n; i++)
			json__free_children(&v->arr.items[i]);
		free(v->arr.items);
		break;
	case JSON_OBJECT:
		for (i = 0; i < v->obj.n; i++) {
			free(v->obj.members[i].key);
			json__free_children(&v->obj.members[i].value);
		}
		free(v->obj.members);
		break;
	default:
		break;
	}
}

void json__free(struct json_value *v)
{
	if (!v)
		return;
	json__free_children(v);
	free(v);
}

struct json_value *json__parse(const char *text, size_t len,
			       struct json_error *err)
{
	struct parser ps = {
		.p = (const unsigned char *)text,
		.start = (const unsigned char *)text,
		.end = (const unsigned char *)text + len,
		.err = err,
	};
	struct json_value *v = xrealloc(NULL, sizeof(*v));

	if (err)
		memset(err, 0, sizeof(*err));
	if (parse_value(&ps, v)) {
		skip_ws(&ps);
		if (ps.p == ps.end)
			return v;
		fail_unexpected(&ps, "end of input after the value");
	}
	json__free(v);
	return NULL;
}

const struct json_value *json__get(const struct json_value *v, const char *key)
{
	size_t i, len;

	if (!v || v->type != JSON_OBJECT)
		return NULL;
	len = strlen(key);
	for (i = 0; i < v->obj.n; i++)
		if (v->obj.members[i].key_len == len &&
		    memcmp(v->obj.members[i].key, key, len) == 0)
			return &v->obj.members[i].value;
	return NULL;
}

bool json__u64(const struct json_value *v, uint64_t *out)
{
	if (v && v->type == JSON_INT && v->i >= 0) {
		*out = (uint64_t)v->i;
		return true;
	}
	if (v && v->type == JSON_UINT) {
		*out = v->u;
		return true;
	}
	return false;
}

bool json__i64(const struct json_value *v, int64_t *out)
{
	if (!v || v->type != JSON_INT)
		return false;
	*out = v->i;
	return true;
}

bool json__double(const struct json_value *v, double *out)
{
	if (!v)
		return false;
	switch (v->type) {
	case JSON_INT:
		*out = (double)v->i;
		return true;
	case JSON_UINT:
		*out = (double)v->u;
		return true;
	case JSON_DOUBLE:
		*out = v->d;
		return true;
	default:
		return false;
	}
}

bool json__bool(const struct json_value *v, bool *out)
{
	if (!v || v->type != JSON_BOOL)
		return false;
	*out = v->b;
	return true;
}

const char *json__str(const struct json_value *v)
{
	return v && v->type == JSON_STRING ? v->str.s : NULL;
}

const char *json__type_name(const struct json_value *v)
{
	if (!v)
		return "nothing";
	switch (v->type) {
	case JSON_NULL:
		return "null";
	case JSON_BOOL:
		return "a boolean";
	case JSON_INT:
	case JSON_UINT:
		return v->type == JSON_INT && v->i < 0 ? "a negative integer" :
							 "an integer";
	case JSON_DOUBLE:
		return "a fractional number";
	case JSON_STRING:
		return "a string";
	case JSON_ARRAY:
		return "an array";
	case JSON_OBJECT:
		return "an object";
	}
	return "?";
}
