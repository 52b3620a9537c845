/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* HTTP routes: a request path with its variable parts folded, so that
 * requests to one handler share one route, and at most max_per_service
 * routes per service, so that a scanner's random URLs cannot grow the
 * series or the memory (docs/design/outcomes.md, "Routes").
 *
 * A segment (between slashes) becomes {id} when it is a number, a UUID,
 * a hex string of 8 digits or more with a decimal digit among them, or a
 * token of 16 characters or more of letters, digits, '-', '_' and '='
 * with both letters and digits (base64, random ids). Names with a dot
 * (files: app.3f2a9c1b.js) are kept. The query and the fragment are
 * dropped; an absolute URL ("http://host/p") keeps its path. Past the
 * bound, a service's new routes are "other"; a route once admitted stays
 * (no eviction: the memory is bounded, the names stable). */
#ifndef KMON_ROUTES_H
#define KMON_ROUTES_H

#include <stddef.h>
#include <stdint.h>

#define ROUTES_DEFAULT_MAX 200
#define ROUTES_OTHER "other"

struct routes;

struct routes *routes__new(size_t max_per_service);
void routes__free(struct routes *r); /* NULL-safe */
/* Writes path's route for service svc into out (outlen bytes); a route
 * that does not fit is "other" too. */
void routes__fold(struct routes *r, uint32_t svc, const char *path, char *out,
		  size_t outlen);
/* The distinct routes admitted for svc (not counting "other"). */
size_t routes__count(const struct routes *r, uint32_t svc);

#endif
