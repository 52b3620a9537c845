// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Plain bytes are checked in place; a string with escapes (rare in what
 * kmond writes) is handed to json__parse, which checks and decodes them,
 * so there is one decoder of escapes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/json_lex.h"
#include "lib/json_scan.h"
#include "lib/utf8.h"

struct scanner {
	const unsigned char *p, *start, *end;
	struct json_error *err;
	bool failed;
};

static unsigned key_hash(const unsigned char *s, size_t len)
{
	return (unsigned)(len * 31 + s[0] * 7 + s[len - 1] * 3 + s[len / 2]) &
	       (JSON_SCAN_SLOTS - 1);
}

void json_scan__keys(struct json_scan_keys *k, const char *const *names, int n)
{
	unsigned h;
	int i;

	memset(k, 0, sizeof(*k));
	k->names = names;
	k->n = n;
	for (i = 0; i < n; i++) {
		k->lens[i] = (uint8_t)strlen(names[i]);
		h = key_hash((const unsigned char *)names[i], k->lens[i]);
		while (k->slots[h])
			h = (h + 1) & (JSON_SCAN_SLOTS - 1);
		k->slots[h] = (uint8_t)(i + 1);
	}
}

/* The index of the named member key[0..len), or -1. */
static int key_index(const struct json_scan_keys *k, const unsigned char *key,
		     size_t len)
{
	unsigned h;
	int i;

	if (!len || len > 255)
		return -1;
	for (h = key_hash(key, len); k->slots[h];
	     h = (h + 1) & (JSON_SCAN_SLOTS - 1)) {
		i = k->slots[h] - 1;
		if (k->lens[i] == len && memcmp(k->names[i], key, len) == 0)
			return i;
	}
	return -1;
}

static void fail_at(struct scanner *sc, const unsigned char *at,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fail_at(struct scanner *sc, const unsigned char *at,
		    const char *fmt, ...)
{
	va_list ap;

	if (sc->failed)
		return;
	sc->failed = true;
	va_start(ap, fmt);
	json__verror(sc->err, (const char *)sc->start, (size_t)(at - sc->start),
		     fmt, ap);
	va_end(ap);
}

static void fail_expected(struct scanner *sc, const char *what)
{
	char buf[16];

	fail_at(sc, sc->p, "expected %s, got %s", what,
		json_lex__describe(sc->p, sc->end, buf, sizeof(buf)));
}

static void skip_ws(struct scanner *sc)
{
	sc->p = json_lex__skip_ws(sc->p, sc->end);
}

static bool expect(struct scanner *sc, char c, const char *what)
{
	skip_ws(sc);
	if (sc->p < sc->end && *sc->p == c) {
		sc->p++;
		return true;
	}
	fail_expected(sc, what);
	return false;
}

/* sc->p at the opening quote; *s..*len the bytes between the quotes. */
static bool scan_string(struct scanner *sc, const char **s, size_t *len,
			bool *escaped)
{
	const unsigned char *open = sc->p, *p = open + 1;
	struct json_error jerr;
	struct json_value *v;
	uint32_t cp;
	size_t n;

	*escaped = false;
	while (p < sc->end && *p != '"') {
		if (*p == '\\') {
			*escaped = true;
			p += 2;
		} else if (*escaped) {
			p++; /* json__parse checks the rest, in order */
		} else if (*p < 0x20) {
			fail_at(sc, p,
				"control byte 0x%02x in a string (escape it)",
				*p);
			return false;
		} else if (*p < 0x80) {
			p++;
		} else if ((n = utf8__seq_len(p, (size_t)(sc->end - p), &cp))) {
			p += n;
		} else {
			fail_at(sc, p, "invalid UTF-8 in a string");
			return false;
		}
	}
	if (p >= sc->end && !*escaped) {
		fail_at(sc, open, "unterminated string");
		return false;
	}
	if (*escaped) {
		/* up to the end of the text when unterminated: a bad escape
		 * on the way is the first error, as json__parse finds it */
		v = json__parse(
			(const char *)open,
			(size_t)((p < sc->end ? p + 1 : sc->end) - open),
			&jerr);
		if (!v) {
			fail_at(sc, open + jerr.offset, "%s", jerr.msg);
			return false;
		}
		json__free(v);
	}
	*s = (const char *)open + 1;
	*len = (size_t)(p - open - 1);
	sc->p = p + 1;
	return true;
}

static bool scan_number(struct scanner *sc, struct json_scan_value *v)
{
	struct json_lex_number n;
	struct json_lex_error lerr;
	const unsigned char *p;

	p = json_lex__number(sc->p, sc->end, &n, &lerr);
	if (!p) {
		sc->p = lerr.at;
		if (lerr.expected)
			fail_expected(sc, lerr.expected);
		else
			fail_at(sc, lerr.at, "%s", lerr.msg);
		return false;
	}
	v->type = JSON_SCAN_NUMBER;
	v->negative = n.negative;
	v->integer = n.integral && n.fits;
	v->u = n.magnitude;
	sc->p = p;
	return true;
}

static bool scan_literal(struct scanner *sc, const char *word,
			 struct json_scan_value *v)
{
	size_t n = strlen(word);

	if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, word, n) != 0) {
		fail_expected(sc, "a value");
		return false;
	}
	sc->p += n;
	v->type = word[0] == 'n' ? JSON_SCAN_NULL : JSON_SCAN_BOOL;
	v->b = word[0] == 't';
	return true;
}

static bool scan_value(struct scanner *sc, struct json_scan_value *v,
		       int depth);

/* An object's members or an array's items, skipped (only checked). */
static bool skip_nested(struct scanner *sc, int depth)
{
	bool object = *sc->p == '{';
	char close = object ? '}' : ']';
	struct json_scan_value v;
	bool escaped;
	const char *s;
	size_t len;

	if (depth >= JSON_MAX_DEPTH) {
		fail_at(sc, sc->p, "nesting deeper than %d", JSON_MAX_DEPTH);
		return false;
	}
	sc->p++;
	skip_ws(sc);
	if (sc->p < sc->end && *sc->p == close) {
		sc->p++;
		return true;
	}
	for (;;) {
		if (object) {
			skip_ws(sc);
			if (sc->p >= sc->end || *sc->p != '"') {
				fail_expected(sc, "a string key in an object");
				return false;
			}
			if (!scan_string(sc, &s, &len, &escaped) ||
			    !expect(sc, ':', "':' after an object key"))
				return false;
		}
		if (!scan_value(sc, &v, depth + 1))
			return false;
		skip_ws(sc);
		if (sc->p < sc->end && *sc->p == ',') {
			sc->p++;
			continue;
		}
		return expect(sc, close,
			      object ? "',' or '}' in an object" :
				       "',' or ']' in an array");
	}
}

static bool scan_value(struct scanner *sc, struct json_scan_value *v, int depth)
{
	skip_ws(sc);
	if (sc->p >= sc->end) {
		fail_expected(sc, "a value");
		return false;
	}
	switch (*sc->p) {
	case '"':
		v->type = JSON_SCAN_STRING;
		return scan_string(sc, &v->s, &v->len, &v->escaped);
	case '{':
	case '[':
		v->type = JSON_SCAN_NESTED;
		v->s = (const char *)sc->p; /* which of the two */
		return skip_nested(sc, depth);
	case 't':
		return scan_literal(sc, "true", v);
	case 'f':
		return scan_literal(sc, "false", v);
	case 'n':
		return scan_literal(sc, "null", v);
	case '-':
	case '0' ... '9':
		return scan_number(sc, v);
	default:
		fail_expected(sc, "a value");
		return false;
	}
}

bool json_scan(const char *text, size_t len, const struct json_scan_keys *k,
	       struct json_scan_value *vals, struct json_error *err)
{
	struct scanner sc = { .p = (const unsigned char *)text,
			      .start = (const unsigned char *)text,
			      .end = (const unsigned char *)text + len,
			      .err = err };
	const unsigned char *key;
	struct json_scan_value skipped;
	uint64_t seen = 0;
	bool escaped;
	const char *s;
	size_t klen;
	int i;

	for (i = 0; i < k->n; i++)
		vals[i].type = JSON_SCAN_ABSENT;
	if (!expect(&sc, '{', "an object"))
		return false;
	skip_ws(&sc);
	if (sc.p < sc.end && *sc.p == '}') {
		sc.p++;
		goto end;
	}
	for (;;) {
		skip_ws(&sc);
		key = sc.p;
		if (sc.p >= sc.end || *sc.p != '"') {
			fail_expected(&sc, "a string key in an object");
			return false;
		}
		if (!scan_string(&sc, &s, &klen, &escaped) ||
		    !expect(&sc, ':', "':' after an object key"))
			return false;
		i = escaped ? -1 : key_index(k, (const unsigned char *)s, klen);
		if (i >= 0 && seen & (1ULL << i)) {
			fail_at(&sc, key, "duplicate key \"%s\"", k->names[i]);
			return false;
		}
		if (i >= 0)
			seen |= 1ULL << i;
		if (!scan_value(&sc, i >= 0 ? &vals[i] : &skipped, 1))
			return false;
		skip_ws(&sc);
		if (sc.p < sc.end && *sc.p == ',') {
			sc.p++;
			continue;
		}
		if (!expect(&sc, '}', "',' or '}' in an object"))
			return false;
		break;
	}
end:
	skip_ws(&sc);
	if (sc.p != sc.end) {
		fail_expected(&sc, "end of input after the value");
		return false;
	}
	return true;
}

bool json_scan__u64(const struct json_scan_value *v, uint64_t *out)
{
	if (v->type != JSON_SCAN_NUMBER || !v->integer || (v->negative && v->u))
		return false;
	*out = v->u;
	return true;
}

bool json_scan__i64(const struct json_scan_value *v, int64_t *out)
{
	if (v->type != JSON_SCAN_NUMBER || !v->integer)
		return false;
	if (!v->negative && v->u <= INT64_MAX)
		*out = (int64_t)v->u;
	else if (v->negative && v->u <= (uint64_t)INT64_MAX + 1)
		*out = (int64_t)(0 - v->u);
	else
		return false;
	return true;
}

size_t json_scan__string(const struct json_scan_value *v, char *out)
{
	struct json_error jerr;
	struct json_value *d;
	size_t n = 0;

	if (!v->escaped) {
		memcpy(out, v->s, v->len);
		out[v->len] = '\0';
		return v->len;
	}
	/* json_scan checked it: the quoted text parses */
	d = json__parse(v->s - 1, v->len + 2, &jerr);
	if (d) {
		n = d->str.len;
		memcpy(out, d->str.s, n);
	}
	out[n] = '\0';
	json__free(d);
	return n;
}

const char *json_scan__type_name(const struct json_scan_value *v)
{
	switch (v->type) {
	case JSON_SCAN_ABSENT:
		return "nothing";
	case JSON_SCAN_NULL:
		return "null";
	case JSON_SCAN_BOOL:
		return "a boolean";
	case JSON_SCAN_NUMBER:
		if (!v->integer)
			return "a fractional number";
		return v->negative && v->u ? "a negative integer" :
					     "an integer";
	case JSON_SCAN_STRING:
		return "a string";
	case JSON_SCAN_NESTED:
		return *v->s == '[' ? "an array" : "an object";
	}
	return "?";
}
