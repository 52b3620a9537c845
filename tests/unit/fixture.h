/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Fixtures of real traffic (tests/unit/protocol, tests/unit/outcome), as
 * tests/lib/proto_capture.py writes them: one message a line, "C LEN
 * HEX" sent by the client, "S LEN HEX" by the server (the first 512
 * bytes, and the full length); lines starting '#' say what it is. */
#ifndef KMON_UNIT_FIXTURE_H
#define KMON_UNIT_FIXTURE_H

#include <stdint.h>
#include <stdio.h>

#define FIXTURE_MSGS 32
#define FIXTURE_BYTES 512

struct fixture_msg {
	char from; /* 'C' or 'S' */
	size_t len; /* the message's full length */
	size_t caplen; /* bytes in b */
	uint8_t b[FIXTURE_BYTES];
};

struct fixture {
	size_t n;
	struct fixture_msg m[FIXTURE_MSGS];
};

/* Reads path into f; false when it cannot be opened. */
static inline int fixture_load(const char *path, struct fixture *f)
{
	static char line[4 * FIXTURE_BYTES];
	FILE *fp = fopen(path, "r");

	if (!fp)
		return 0;
	f->n = 0;
	while (f->n < FIXTURE_MSGS && fgets(line, sizeof(line), fp)) {
		struct fixture_msg *m = &f->m[f->n];
		unsigned int x;
		int at;

		if ((line[0] != 'C' && line[0] != 'S') ||
		    sscanf(line + 1, "%zu %n", &m->len, &at) != 1)
			continue;
		m->from = line[0];
		m->caplen = 0;
		for (const char *h = line + 1 + at;
		     m->caplen < FIXTURE_BYTES && sscanf(h, "%2x", &x) == 1;
		     h += 2)
			m->b[m->caplen++] = x;
		f->n++;
	}
	fclose(fp);
	return 1;
}

#endif
