/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef KMON_UTF8_H
#define KMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence starting at s (at most len bytes),
 * with its code point in *cp; 0 when it is not one: overlong forms,
 * surrogates and code points past U+10FFFF are invalid too (RFC 3629). */
size_t utf8__seq_len(const unsigned char *s, size_t len, uint32_t *cp);

#endif
