// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target: any bytes read by both JSON readers. They share one
 * lexer (lib/json_lex.h) and must judge alike: json_scan accepts exactly
 * the objects json__parse accepts, refuses the rest at the same offset
 * with the same message, and reads a named member as the tree holds it.
 * The one allowed difference (json_scan.h): json_scan refuses only the
 * duplicates of the keys it was asked for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/json_parse.h"
#include "lib/json_scan.h"

static const char *const names[] = { "a", "b", "kind", "n" };

static void same_member(const struct json_value *tv,
			const struct json_scan_value *sv)
{
	uint64_t tu, su;
	int64_t ti, si;
	char buf[4096];

	if (!tv) {
		if (sv->type != JSON_SCAN_ABSENT)
			abort();
		return;
	}
	if ((json__u64(tv, &tu) != json_scan__u64(sv, &su)) ||
	    (json__u64(tv, &tu) && tu != su))
		abort();
	if ((json__i64(tv, &ti) != json_scan__i64(sv, &si)) ||
	    (json__i64(tv, &ti) && ti != si))
		abort();
	if ((tv->type == JSON_STRING) != (sv->type == JSON_SCAN_STRING))
		abort();
	if (tv->type == JSON_STRING && sv->len < sizeof(buf) &&
	    (json_scan__string(sv, buf) != tv->str.len ||
	     memcmp(buf, tv->str.s, tv->str.len)))
		abort();
}

static bool starts_object(const uint8_t *data, size_t size)
{
	size_t i = 0;

	while (i < size && (data[i] == ' ' || data[i] == '\t' ||
			    data[i] == '\n' || data[i] == '\r'))
		i++;
	return i < size && data[i] == '{';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_scan_value vals[4];
	struct json_error perr, serr;
	struct json_scan_keys keys;
	struct json_value *tree;
	bool scanned;

	json_scan__keys(&keys, names, 4);
	tree = json__parse((const char *)data, size, &perr);
	scanned = json_scan((const char *)data, size, &keys, vals, &serr);
	if (tree && tree->type == JSON_OBJECT) {
		if (!scanned)
			abort();
		for (int i = 0; i < 4; i++)
			same_member(json__get(tree, names[i]), &vals[i]);
	} else if (tree) {
		if (scanned) /* valid JSON, not an object */
			abort();
	} else if (strncmp(perr.msg, "duplicate key", 13) == 0) {
		/* json_scan may accept it or refuse it later: either */
	} else if (scanned) {
		abort();
	} else if (starts_object(data, size) &&
		   (serr.offset != perr.offset || strcmp(serr.msg, perr.msg))) {
		/* no duplicate before it, so the first error is the same */
		abort();
	}
	json__free(tree);
	return 0;
}
