// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* HTTP routes: the folding rule on real-looking paths, the bound per
 * service, and a URL storm (a scanner's random paths): at most the bound
 * of routes plus "other", in bounded memory, and the other services'
 * routes untouched. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "collectors/tcp/routes.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "unit.h"

#define STORM_URLS 100000

static const struct {
	const char *path, *route;
} folds[] = {
	{ "/api/v1/users/12345/orders", "/api/v1/users/{id}/orders" },
	{ "/items/550e8400-e29b-41d4-a716-446655440000", "/items/{id}" },
	{ "/items/550E8400-E29B-41D4-A716-446655440000/", "/items/{id}/" },
	/* a file name with a fingerprint is kept: it changes per deploy */
	{ "/static/app.3f2a9c1b.js", "/static/app.3f2a9c1b.js" },
	{ "/commits/3f2a9c1b7d", "/commits/{id}" },
	{ "/colors/deadbeef", "/colors/deadbeef" }, /* hex, but no digit */
	{ "/colors/c0ffee", "/colors/c0ffee" }, /* too short for hex */
	{ "/t/dGhpcyBpcyBhIHRva2VuMTIz", "/t/{id}" },
	{ "/t/eyJhbGciOiJIUzI1NiJ9_x-y=", "/t/{id}" },
	{ "/docs/getting-started-guide", "/docs/getting-started-guide" },
	{ "/v1/health", "/v1/health" },
	{ "/search?q=12345&page=2", "/search" },
	{ "/a/b#section-2", "/a/b" },
	{ "/users/42/", "/users/{id}/" },
	{ "//double//7", "//double//{id}" },
	{ "/", "/" },
	{ "*", "*" },
	{ "http://example.com:8080/orders/991?x=1", "/orders/{id}" },
	{ "https://example.com", "/" },
};

static void check_folds(void)
{
	struct routes *r = routes__new(ROUTES_DEFAULT_MAX);
	char out[128];

	for (size_t i = 0; i < sizeof(folds) / sizeof(folds[0]); i++) {
		routes__fold(r, 1, folds[i].path, out, sizeof(out));
		CHECK_STR(out, folds[i].route);
	}
	/* the same paths again: remembered, the same routes */
	for (size_t i = 0; i < sizeof(folds) / sizeof(folds[0]); i++) {
		routes__fold(r, 1, folds[i].path, out, sizeof(out));
		CHECK_STR(out, folds[i].route);
	}
	/* a route that does not fit the buffer, remembered or not */
	routes__fold(r, 1, "/a/very/long/path/that/does/not/fit", out, 16);
	CHECK_STR(out, ROUTES_OTHER);
	routes__fold(r, 1, "/api/v1/users/12345/orders", out, 16);
	CHECK_STR(out, ROUTES_OTHER);
	routes__fold(r, 1, "/a/very/long/path/that/does/not/fit", out,
		     sizeof(out));
	CHECK_STR(out, "/a/very/long/path/that/does/not/fit");
	routes__free(r);
}

static void check_bound(void)
{
	struct routes *r = routes__new(3);
	char out[64];

	routes__fold(r, 7, "/a/1", out, sizeof(out));
	CHECK_STR(out, "/a/{id}");
	routes__fold(r, 7, "/b", out, sizeof(out));
	routes__fold(r, 7, "/c", out, sizeof(out));
	CHECK_STR(out, "/c");
	routes__fold(r, 7, "/d", out, sizeof(out));
	CHECK_STR(out, ROUTES_OTHER);
	routes__fold(r, 7, "/a/2", out, sizeof(out)); /* admitted before */
	CHECK_STR(out, "/a/{id}");
	routes__fold(r, 7, "/d?x=1", out, sizeof(out)); /* remembered */
	CHECK_STR(out, ROUTES_OTHER);
	routes__fold(r, 8, "/d", out, sizeof(out)); /* per service */
	CHECK_STR(out, "/d");
	CHECK(routes__count(r, 7) == 3);
	CHECK(routes__count(r, 8) == 1);
	routes__free(r);
}

/* A random segment: lower-case words most of the time, sometimes
 * digits in them, sometimes a number. */
static void random_segment(uint64_t *rng, char *s)
{
	uint64_t x = splitmix64_next(rng);
	int len = 1 + x % 12;

	for (int i = 0; i < len; i++) {
		uint64_t c = splitmix64_next(rng);

		s[i] = (x >> 8) % 3 == 0 && c % 4 == 0 ? '0' + c % 10 :
							 'a' + c % 26;
	}
	s[len] = '\0';
}

static void check_storm(void)
{
	struct routes *r = routes__new(ROUTES_DEFAULT_MAX);
	struct hashmap *outs = hashmap__new();
	uint64_t rng = 1;
	size_t before, grew;
	char url[256], out[128], again[128];

	routes__fold(r, 2, "/health", out, sizeof(out));
	before = mallinfo2().uordblks;
	for (int u = 0; u < STORM_URLS; u++) {
		int segs = 1 + splitmix64_next(&rng) % 5;
		size_t at = 0;

		for (int k = 0; k < segs; k++) {
			url[at++] = '/';
			random_segment(&rng, url + at);
			at += strlen(url + at);
		}
		routes__fold(r, 1, url, out, sizeof(out));
		hashmap__set(outs, fnv1a(out, strlen(out)), 1);
		/* again, remembered: the same route */
		routes__fold(r, 1, url, again, sizeof(again));
		CHECK_STR(again, out);
	}
	/* a sanitizer's allocator leaves glibc's figures still: 0 */
	grew = mallinfo2().uordblks;
	grew = grew > before ? grew - before : 0;
	printf("storm: %d URLs, %zu routes, %zu distinct names, heap +%zu "
	       "bytes (with the test's own set of names)\n",
	       STORM_URLS, routes__count(r, 1), hashmap__count(outs), grew);
	CHECK(routes__count(r, 1) == ROUTES_DEFAULT_MAX);
	CHECK(hashmap__count(outs) == ROUTES_DEFAULT_MAX + 1);
	/* 200 hashes and the test's 201 names, far below 100000 URLs */
	CHECK(grew < 64 * 1024);
	routes__fold(r, 2, "/health", out, sizeof(out));
	CHECK_STR(out, "/health");
	routes__fold(r, 2, "/ready", out, sizeof(out));
	CHECK_STR(out, "/ready");

	/* ids in every request: one route */
	for (int u = 0; u < 10000; u++) {
		snprintf(
			url, sizeof(url),
			"/users/%llu/orders/%08llx-1234-4abc-8def-0123456789ab",
			(unsigned long long)splitmix64_next(&rng) % 1000000,
			(unsigned long long)splitmix64_next(&rng) &
				0xffffffffULL);
		routes__fold(r, 3, url, out, sizeof(out));
		CHECK_STR(out, "/users/{id}/orders/{id}");
	}
	CHECK(routes__count(r, 3) == 1);
	hashmap__free(outs);
	routes__free(r);
}

int main(void)
{
	check_folds();
	check_bound();
	check_storm();
	return unit_done("routes");
}
