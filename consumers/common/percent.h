/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One way for the consumers to write an error rate on a picture. */
#ifndef KMON_PERCENT_H
#define KMON_PERCENT_H

#include <stddef.h>

/* A fraction as a percentage: "12.5%", "0.4%", and one too small for a
 * decimal in two significant digits ("0.013%", at least "<0.001%"), so
 * that a few errors never read as "0.0%". */
void percent__format(char *buf, size_t len, double fraction);

#endif
