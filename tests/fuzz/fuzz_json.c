// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target: any bytes as a comm or another string field. The
 * encoded record must be valid JSON and the string must decode back to the
 * same bytes (escapes of invalid UTF-8 keep each byte's value). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/record.h"

/* Decodes the JSON string literal at *p (after its opening quote) as the
 * encoder writes it; returns the decoded length, or -1 if invalid. */
static long decode(const char **p, char *out)
{
	const char *s = *p;
	long n = 0;

	for (;;) {
		unsigned char c = *s++;

		if (c == '"')
			break;
		if (c < 0x20)
			return -1;
		if (c != '\\') {
			out[n++] = c;
			continue;
		}
		switch (*s++) {
		case '"':
			out[n++] = '"';
			break;
		case '\\':
			out[n++] = '\\';
			break;
		case 'n':
			out[n++] = '\n';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'r':
			out[n++] = '\r';
			break;
		case 'u': {
			char hex[5] = { 0 };
			long v;

			memcpy(hex, s, 4);
			v = strtol(hex, NULL, 16);
			if (strlen(hex) != 4 || v > 0xff)
				return -1;
			out[n++] = (char)v;
			s += 4;
			break;
		}
		default:
			return -1;
		}
	}
	*p = s;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct record r;
	const char *p;
	char *back;
	long n;

	record__init(&r);
	record__begin(&r, "syscall", 1, "n");
	record__strn(&r, "comm", (const char *)data, size);
	record__end(&r);
	p = strstr(r.json.buf, "\"comm\":\"");
	if (!p)
		abort();
	p += 8;
	back = malloc(size + 1);
	n = decode(&p, back);
	if (n != (long)size || memcmp(back, data, size) != 0 || strcmp(p, "}"))
		abort();
	free(back);
	record__free(&r);
	return 0;
}
