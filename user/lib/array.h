/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The number of elements of an array (not of a pointer: sizeof of a
 * pointer gives a wrong count silently). */
#ifndef KMON_ARRAY_H
#define KMON_ARRAY_H

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
