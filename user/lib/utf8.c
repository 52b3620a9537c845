// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "lib/utf8.h"

size_t utf8__seq_len(const unsigned char *s, size_t len, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) ||
	    (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 0;
	*cp = v;
	return n;
}
