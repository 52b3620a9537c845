// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target: any bytes as the first messages of a connection. The
 * input is a sequence of [flags][extra][bytes]: flags bit 0 says the
 * server sent it, bits 1-7 how many bytes follow (captured), extra how
 * many more the message had. The classifier must not crash or read out
 * of bounds, must decide once told no more will come, and must name only
 * protocols it knows, with a printable server name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/protocol.h"

#define MAX_MSGS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_msg m[MAX_MSGS];
	struct proto_result r;
	size_t n = 0, i = 0;

	while (i + 2 <= size && n < MAX_MSGS) {
		size_t cap = data[i] >> 1;

		if (cap > size - i - 2)
			cap = size - i - 2;
		m[n].from_server = data[i] & 1;
		m[n].caplen = cap;
		m[n].len = cap + data[i + 1];
		/* a copy of its own, so ASan sees a read past it */
		m[n].data = malloc(cap ? cap : 1);
		memcpy((void *)m[n].data, data + i + 2, cap);
		n++;
		i += 2 + cap;
	}
	for (int done = 0; done < 2; done++) {
		protocol__classify(m, n, done, &r);
		if (r.proto < 0 || r.proto >= PROTO_NR)
			abort();
		if (done && !r.decided)
			abort();
		if (!r.decided && r.proto != PROTO_UNKNOWN)
			abort();
		for (const char *c = r.sni; *c; c++)
			if (*c < 0x20 || *c > 0x7e)
				abort();
	}
	for (size_t k = 0; k < n; k++)
		free((void *)m[k].data);
	return 0;
}
