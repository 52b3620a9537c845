// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Routes: the folding rule and the bound per service (routes.h). A
 * service's admitted routes are kept as their hashes only: the bound
 * costs 16 bytes a route, whatever the paths' lengths. The last paths
 * seen are remembered with their routes: a service's requests go to few
 * paths, and folding one again cost 82 ns a record. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/tcp/routes.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/xalloc.h"

#define ROUTES_ID "{id}"
#define ROUTES_MIN_HEX 8
#define ROUTES_MIN_TOKEN 16
#define ROUTES_CACHED 256 /* paths remembered (a power of two) */
#define ROUTES_CACHED_LEN 128 /* their longest, and their routes' */

/* A path seen, by hash, with the route it got. A route never changes
 * once given: admitted routes stay, and a route past the bound stays
 * past it (the bound only fills), so the answer is the same each time. */
struct route_seen {
	uint64_t hash; /* of svc and path; 0: empty */
	uint32_t svc;
	uint8_t path_len;
	uint8_t route_len;
	char path[ROUTES_CACHED_LEN];
	char route[ROUTES_CACHED_LEN];
};

struct routes {
	struct hashmap *services; /* svc -> struct hashmap * of route hashes */
	size_t max;
	struct route_seen *seen; /* ROUTES_CACHED of them, by hash */
};

struct routes *routes__new(size_t max_per_service)
{
	struct routes *r = xcalloc(1, sizeof(*r));

	r->seen = xcalloc(ROUTES_CACHED, sizeof(*r->seen));

	r->services = hashmap__new();
	r->max = max_per_service;
	return r;
}

static void free_service(void *m)
{
	hashmap__free(m);
}

void routes__free(struct routes *r)
{
	if (!r)
		return;
	hashmap__free_values(r->services, free_service);
	free(r->seen);
	free(r);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static bool is_letter(char c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

/* 8-4-4-4-12 hex digits. */
static bool is_uuid(const char *s, size_t n)
{
	if (n != 36)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !is_hex(s[i]))
			return false;
	}
	return true;
}

/* Whether a segment names one thing among many (an id) rather than a
 * handler: see routes.h. */
static bool is_variable(const char *s, size_t n)
{
	size_t digits = 0, hex = 0, letters = 0, token = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		digits += is_digit(s[i]);
		hex += is_hex(s[i]);
		letters += is_letter(s[i]);
		token += is_digit(s[i]) || is_letter(s[i]) || s[i] == '-' ||
			 s[i] == '_' || s[i] == '=';
	}
	if (digits == n || is_uuid(s, n))
		return true;
	if (hex == n && n >= ROUTES_MIN_HEX && digits)
		return true;
	return token == n && n >= ROUTES_MIN_TOKEN && digits && letters;
}

/* The path part of an absolute URL, and where the path ends (the query
 * or the fragment). */
static const char *path_of(const char *url, size_t *len)
{
	const char *scheme = url[0] == '/' ? NULL : strstr(url, "://");

	if (scheme && scheme - url <= 5) {
		url = strchr(scheme + 3, '/');
		if (!url)
			url = "/";
	}
	/* not strcspn: it builds a table of the set each call, most of a
	 * remembered path's cost */
	for (*len = 0; url[*len] && url[*len] != '?' && url[*len] != '#';)
		(*len)++;
	return url;
}

/* The folded path into out, or false when it does not fit. */
static bool fold(const char *path, size_t len, char *out, size_t outlen)
{
	size_t o = 0, i = 0;

	while (i <= len) {
		size_t n = strcspn(path + i, "/?#");
		const char *seg = path + i;
		size_t add;

		if (n > len - i)
			n = len - i;
		if (is_variable(seg, n)) {
			seg = ROUTES_ID;
			add = strlen(ROUTES_ID);
		} else {
			add = n;
		}
		if (o + add + 1 >= outlen)
			return false;
		memcpy(out + o, seg, add);
		o += add;
		i += n;
		if (i < len)
			out[o++] = '/';
		i++;
	}
	out[o] = '\0';
	return true;
}

/* Whether the service may have this route: known, or new and under the
 * bound. */
static bool admit(struct routes *r, uint32_t svc, const char *route)
{
	uint64_t *slot = hashmap__find(r->services, svc);
	uint64_t h = fnv1a(route, strlen(route));
	struct hashmap *seen;

	if (!slot) {
		seen = hashmap__new();
		hashmap__set(r->services, svc, (uint64_t)(uintptr_t)seen);
	} else {
		seen = (struct hashmap *)(uintptr_t)*slot;
	}
	if (hashmap__find(seen, h))
		return true;
	if (hashmap__count(seen) >= r->max)
		return false;
	hashmap__set(seen, h, 1);
	return true;
}

/* A word at a time (FNV-1a's byte at a time was most of a remembered
 * path's cost): the slot's path is compared whole anyway. */
static uint64_t path_hash(uint32_t svc, const char *path, size_t len)
{
	uint64_t h = svc, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, path + i, 8);
		h = (h << 5 | h >> 59) ^ w;
		h *= 0x9e3779b97f4a7c15ULL;
	}
	w = 0;
	memcpy(&w, path + i, len - i);
	return mix64(h ^ w ^ len);
}

/* Where path (len bytes) of svc is remembered, or would be; *hash its
 * hash (never 0). */
static struct route_seen *seen_slot(struct routes *r, uint32_t svc,
				    const char *path, size_t len,
				    uint64_t *hash)
{
	uint64_t h = path_hash(svc, path, len) | 1;

	*hash = h;
	return &r->seen[(h >> 1) & (ROUTES_CACHED - 1)];
}

static bool seen_matches(const struct route_seen *s, uint64_t hash,
			 uint32_t svc, const char *path, size_t len)
{
	return s->hash == hash && s->svc == svc && s->path_len == len &&
	       !memcmp(s->path, path, len);
}

static void seen_keep(struct route_seen *s, uint64_t hash, uint32_t svc,
		      const char *path, size_t len, const char *route)
{
	size_t rlen = strlen(route);

	if (len >= ROUTES_CACHED_LEN || rlen >= ROUTES_CACHED_LEN)
		return;
	s->hash = hash;
	s->svc = svc;
	s->path_len = len;
	s->route_len = rlen;
	memcpy(s->path, path, len);
	memcpy(s->route, route, rlen + 1);
}

void routes__fold(struct routes *r, uint32_t svc, const char *path, char *out,
		  size_t outlen)
{
	struct route_seen *s;
	uint64_t hash;
	size_t len;

	if (outlen == 0)
		return;
	path = path_of(path, &len);
	s = seen_slot(r, svc, path, len, &hash);
	if (seen_matches(s, hash, svc, path, len) && s->route_len < outlen) {
		/* whole when it fits: a copy of a length the compiler knows
		 * is a few vector moves, of one it does not a rep movs */
		if (outlen >= ROUTES_CACHED_LEN)
			memcpy(out, s->route, ROUTES_CACHED_LEN);
		else
			memcpy(out, s->route, s->route_len + 1);
		return;
	}
	if (!fold(path, len, out, outlen))
		goto other; /* this buffer's limit: not remembered */
	if (!admit(r, svc, out))
		snprintf(out, outlen, "%s", ROUTES_OTHER);
	seen_keep(s, hash, svc, path, len, out);
	return;
other:
	snprintf(out, outlen, "%s", ROUTES_OTHER);
}

size_t routes__count(const struct routes *r, uint32_t svc)
{
	uint64_t *slot = hashmap__find(r->services, svc);

	return slot ? hashmap__count((struct hashmap *)(uintptr_t)*slot) : 0;
}
