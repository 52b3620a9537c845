// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <malloc.h>

#include "lib/heap.h"

/* glibc's most for M_MMAP_THRESHOLD on 64 bits: blocks below it come from
 * the heap. */
#define HEAP_MMAP_THRESHOLD (32u << 20)
/* While held: never trimmed. Settled: what glibc's own threshold grows to
 * once a start has freed the BTF's mapping (twice its 5 MiB). */
#define HEAP_HELD_TRIM (1u << 30)
#define HEAP_SETTLED_TRIM (10u << 20)

void heap__hold(void)
{
	mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, HEAP_HELD_TRIM);
}

void heap__settle(void)
{
	malloc_trim(0);
	mallopt(M_TRIM_THRESHOLD, HEAP_SETTLED_TRIM);
}
