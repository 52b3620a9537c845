// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A strict recursive-descent JSON parser. Every node and decoded string
 * of a document lives in one arena (a list of blocks), so a document is
 * freed in one call and parsing a record costs a few allocations. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_parse.h"

#define ARENA_BLOCK 4096

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	max_align_t data[];
};

struct json {
	struct arena_block *blocks;
	struct json_value *root;
};

struct parser {
	const char *start, *p, *end;
	struct json *doc;
	char *err;
	size_t errlen;
	int depth;
	int ret; /* -ENOMEM once an allocation failed */
};

static void *arena_alloc(struct json *doc, size_t size)
{
	struct arena_block *b = doc->blocks;
	size_t align = sizeof(max_align_t);
	void *ptr;

	size = (size + align - 1) / align * align;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = doc->blocks;
		doc->blocks = b;
	}
	ptr = (char *)b->data + b->used;
	b->used += size;
	return ptr;
}

__attribute__((format(printf, 2, 3))) static int fail(struct parser *ps,
						      const char *fmt, ...)
{
	size_t n;
	va_list ap;

	/* Only the first error is reported: it is where parsing stopped. */
	if (ps->ret)
		return ps->ret;
	ps->ret = -EINVAL;
	n = snprintf(ps->err, ps->errlen, "col %zu: ",
		     (size_t)(ps->p - ps->start) + 1);
	if (n < ps->errlen) {
		va_start(ap, fmt);
		vsnprintf(ps->err + n, ps->errlen - n, fmt, ap);
		va_end(ap);
	}
	return ps->ret;
}

static int out_of_memory(struct parser *ps)
{
	if (!ps->ret) {
		snprintf(ps->err, ps->errlen, "out of memory");
		ps->ret = -ENOMEM;
	}
	return ps->ret;
}

static struct json_value *new_value(struct parser *ps, enum json_type type)
{
	struct json_value *v = arena_alloc(ps->doc, sizeof(*v));

	if (!v) {
		out_of_memory(ps);
		return NULL;
	}
	memset(v, 0, sizeof(*v));
	v->type = type;
	return v;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
				   *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

/* Describes the character at p for an error message. */
static const char *what_is_here(struct parser *ps, char *buf, size_t size)
{
	unsigned char c;

	if (ps->p >= ps->end)
		return "end of input";
	c = *ps->p;
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else
		snprintf(buf, size, "byte 0x%02x", c);
	return buf;
}

static int unexpected(struct parser *ps, const char *wanted)
{
	char buf[16];

	return fail(ps, "expected %s, got %s", wanted,
		    what_is_here(ps, buf, sizeof(buf)));
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

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
	*out = v;
	return 0;
}

static size_t utf8_put(char *dst, unsigned cp)
{
	if (cp < 0x80) {
		dst[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		dst[0] = 0xc0 | cp >> 6;
		dst[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		dst[0] = 0xe0 | cp >> 12;
		dst[1] = 0x80 | (cp >> 6 & 0x3f);
		dst[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	dst[0] = 0xf0 | cp >> 18;
	dst[1] = 0x80 | (cp >> 12 & 0x3f);
	dst[2] = 0x80 | (cp >> 6 & 0x3f);
	dst[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlong forms,
 * no surrogates, nothing past U+10FFFF), or 0. */
static size_t utf8_valid(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0];
	size_t n, i;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (avail < n)
		return 0;
	/* The second byte's range is what rules out overlong forms,
	 * surrogates and code points past U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* One \uXXXX escape at ps->p (after the backslash and 'u'), or a
 * surrogate pair. Writes UTF-8 to dst and returns its length, or 0. */
static size_t unicode_escape(struct parser *ps, char *dst)
{
	unsigned cp, lo;

	if (ps->end - ps->p < 4 || hex4(ps->p, &cp))
		return fail(ps, "\\u needs 4 hex digits"), 0;
	ps->p += 4;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(ps, "lone low surrogate \\u%04x", cp), 0;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
		    hex4(ps->p + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
			return fail(ps, "high surrogate \\u%04x without its "
					"low half", cp), 0;
		ps->p += 6;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return utf8_put(dst, cp);
}

/* Decodes the string starting at the opening quote into the arena. */
static int parse_string(struct parser *ps, const char **out, size_t *outlen)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *q;
	char *buf;
	size_t n = 0, len;

	/* The raw length bounds the decoded one. */
	ps->p++;
	for (q = ps->p; q < ps->end && *q != '"'; q++)
		if (*q == '\\' && q + 1 < ps->end)
			q++;
	buf = arena_alloc(ps->doc, q - ps->p + 1);
	if (!buf)
		return out_of_memory(ps);
	while (ps->p < ps->end && *ps->p != '"') {
		unsigned char c = *ps->p;
		const char *e;

		if (c < 0x20)
			return fail(ps, "control character 0x%02x in a string "
					"(must be escaped)", c);
		if (c == '\\') {
			ps->p++;
			if (ps->p < ps->end && *ps->p == 'u') {
				ps->p++;
				len = unicode_escape(ps, buf + n);
				if (!len)
					return ps->ret;
				n += len;
				continue;
			}
			e = ps->p < ps->end && *ps->p ? strchr(from, *ps->p) :
							NULL;
			if (!e)
				return unexpected(ps, "an escape (\\\" \\\\ \\/ "
						      "\\b \\f \\n \\r \\t \\u)");
			buf[n++] = to[e - from];
			ps->p++;
			continue;
		}
		len = utf8_valid((const unsigned char *)ps->p, ps->end - ps->p);
		if (!len)
			return fail(ps, "invalid UTF-8 byte 0x%02x", c);
		memcpy(buf + n, ps->p, len);
		n += len;
		ps->p += len;
	}
	if (ps->p >= ps->end)
		return fail(ps, "unterminated string");
	ps->p++;
	buf[n] = '\0';
	*out = buf;
	*outlen = n;
	return 0;
}

static int digits(struct parser *ps)
{
	const char *from = ps->p;

	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
		ps->p++;
	return ps->p > from ? 0 : unexpected(ps, "a digit");
}

static int parse_number(struct parser *ps, struct json_value *v)
{
	const char *from = ps->p;
	char *text;

	v->num.integer = true;
	if (*ps->p == '-')
		ps->p++;
	if (ps->p < ps->end && *ps->p == '0') {
		ps->p++;
		if (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
			return fail(ps, "leading zero in a number");
	} else if (digits(ps)) {
		return ps->ret;
	}
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		v->num.integer = false;
		if (digits(ps))
			return ps->ret;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		v->num.integer = false;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (digits(ps))
			return ps->ret;
	}
	text = arena_alloc(ps->doc, ps->p - from + 1);
	if (!text)
		return out_of_memory(ps);
	memcpy(text, from, ps->p - from);
	text[ps->p - from] = '\0';
	v->num.text = text;
	v->num.value = strtod(text, NULL);
	return 0;
}

static int parse_literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return unexpected(ps, "a value");
	ps->p += n;
	return 0;
}

static int parse_value(struct parser *ps, struct json_value **out);

/* Arrays and objects: elements separated by ',' up to the closer. */
static int parse_list(struct parser *ps, struct json_value *v, char closer)
{
	struct json_value **tail = &v->list.first, *item;
	bool object = closer == '}';
	const char *key = NULL;
	size_t keylen;

	if (++ps->depth > JSON_MAX_DEPTH)
		return fail(ps, "nested deeper than %d", JSON_MAX_DEPTH);
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == closer) {
		ps->p++;
		ps->depth--;
		return 0;
	}
	for (;;) {
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"')
				return unexpected(ps, "a member name");
			if (parse_string(ps, &key, &keylen))
				return ps->ret;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return unexpected(ps, "':'");
			ps->p++;
		}
		if (parse_value(ps, &item))
			return ps->ret;
		item->key = key;
		*tail = item;
		tail = &item->next;
		v->list.count++;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			skip_ws(ps);
			continue;
		}
		if (ps->p < ps->end && *ps->p == closer) {
			ps->p++;
			ps->depth--;
			return 0;
		}
		return unexpected(ps, object ? "',' or '}'" : "',' or ']'");
	}
}

static int parse_value(struct parser *ps, struct json_value **out)
{
	struct json_value *v;
	char c;

	skip_ws(ps);
	if (ps->p >= ps->end)
		return unexpected(ps, "a value");
	c = *ps->p;
	if (c == '{' || c == '[') {
		v = new_value(ps, c == '{' ? JSON_OBJECT : JSON_ARRAY);
		if (!v || parse_list(ps, v, c == '{' ? '}' : ']'))
			return ps->ret;
	} else if (c == '"') {
		v = new_value(ps, JSON_STRING);
		if (!v || parse_string(ps, &v->str.ptr, &v->str.len))
			return ps->ret;
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		v = new_value(ps, JSON_NUMBER);
		if (!v || parse_number(ps, v))
			return ps->ret;
	} else if (c == 't' || c == 'f') {
		v = new_value(ps, JSON_BOOL);
		if (!v || parse_literal(ps, c == 't' ? "true" : "false"))
			return ps->ret;
		v->boolean = c == 't';
	} else if (c == 'n') {
		v = new_value(ps, JSON_NULL);
		if (!v || parse_literal(ps, "null"))
			return ps->ret;
	} else {
		return unexpected(ps, "a value");
	}
	*out = v;
	return 0;
}

int json__parse(struct json **out, const char *text, size_t len, char *err,
		size_t errlen)
{
	struct parser ps = {
		.start = text, .p = text, .end = text + len,
		.err = err, .errlen = errlen,
	};
	struct json *doc;

	*out = NULL;
	doc = calloc(1, sizeof(*doc));
	if (!doc) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ps.doc = doc;
	if (!parse_value(&ps, &doc->root)) {
		skip_ws(&ps);
		if (ps.p < ps.end)
			unexpected(&ps, "the end after the value");
	}
	if (ps.ret) {
		json__free(doc);
		return ps.ret;
	}
	*out = doc;
	return 0;
}

const struct json_value *json__root(const struct json *doc)
{
	return doc ? doc->root : NULL;
}

void json__free(struct json *doc)
{
	struct arena_block *b, *next;

	if (!doc)
		return;
	for (b = doc->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	free(doc);
}

const struct json_value *json__member(const struct json_value *obj,
				      const char *key)
{
	const struct json_value *v;

	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (v = obj->list.first; v; v = v->next)
		if (strcmp(v->key, key) == 0)
			return v;
	return NULL;
}

const struct json_value *json__index(const struct json_value *arr, size_t i)
{
	const struct json_value *v;

	if (!arr || arr->type != JSON_ARRAY)
		return NULL;
	for (v = arr->list.first; v && i; v = v->next)
		i--;
	return v;
}

/* One path step: a member name, or an index into an array. */
static const struct json_value *step(const struct json_value *v,
				     const char *name, size_t len)
{
	char buf[256];
	char *end;
	unsigned long i;

	if (len >= sizeof(buf))
		return NULL;
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (v->type == JSON_OBJECT)
		return json__member(v, buf);
	if (v->type != JSON_ARRAY || !len || buf[0] < '0' || buf[0] > '9')
		return NULL;
	i = strtoul(buf, &end, 10);
	return *end ? NULL : json__index(v, i);
}

const struct json_value *json__lookup(const struct json_value *v,
				      const char *path)
{
	const char *dot;

	if (!path)
		return v;
	while (v && *path) {
		dot = strchr(path, '.');
		if (!dot)
			return step(v, path, strlen(path));
		v = step(v, path, dot - path);
		path = dot + 1;
	}
	return v;
}

int json__string(const struct json_value *v, const char **out)
{
	if (!v || v->type != JSON_STRING)
		return -1;
	*out = v->str.ptr;
	return 0;
}

/* The magnitude of an integer's digits (sign skipped), or -1 when it
 * does not fit in 64 bits. */
static int magnitude(const char *text, uint64_t *out)
{
	uint64_t n = 0;

	if (*text == '-')
		text++;
	for (; *text; text++) {
		unsigned d = *text - '0';

		if (n > (UINT64_MAX - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	*out = n;
	return 0;
}

int json__u64(const struct json_value *v, uint64_t *out)
{
	uint64_t n;

	if (!v || v->type != JSON_NUMBER || !v->num.integer ||
	    magnitude(v->num.text, &n))
		return -1;
	if (v->num.text[0] == '-' && n)
		return -1;
	*out = n;
	return 0;
}

int json__i64(const struct json_value *v, int64_t *out)
{
	uint64_t n;

	if (!v || v->type != JSON_NUMBER || !v->num.integer ||
	    magnitude(v->num.text, &n))
		return -1;
	if (v->num.text[0] == '-') {
		if (n > (uint64_t)INT64_MAX + 1)
			return -1;
		*out = n == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)n;
	} else {
		if (n > INT64_MAX)
			return -1;
		*out = (int64_t)n;
	}
	return 0;
}

int json__double(const struct json_value *v, double *out)
{
	if (!v || v->type != JSON_NUMBER)
		return -1;
	*out = v->num.value;
	return 0;
}

int json__bool(const struct json_value *v, bool *out)
{
	if (!v || v->type != JSON_BOOL)
		return -1;
	*out = v->boolean;
	return 0;
}

bool json__is_null(const struct json_value *v)
{
	return v && v->type == JSON_NULL;
}

int json__get_string(const struct json_value *v, const char *path,
		     const char **out)
{
	return json__string(json__lookup(v, path), out);
}

int json__get_u64(const struct json_value *v, const char *path,
		  uint64_t *out)
{
	return json__u64(json__lookup(v, path), out);
}

int json__get_i64(const struct json_value *v, const char *path,
		  int64_t *out)
{
	return json__i64(json__lookup(v, path), out);
}

int json__get_double(const struct json_value *v, const char *path,
		     double *out)
{
	return json__double(json__lookup(v, path), out);
}

int json__get_bool(const struct json_value *v, const char *path, bool *out)
{
	return json__bool(json__lookup(v, path), out);
}

const char *json__type_name(enum json_type type)
{
	static const char *const names[] = {
		[JSON_NULL] = "null",	  [JSON_BOOL] = "boolean",
		[JSON_NUMBER] = "number", [JSON_STRING] = "string",
		[JSON_ARRAY] = "array",	  [JSON_OBJECT] = "object",
	};

	return type <= JSON_OBJECT ? names[type] : "?";
}
