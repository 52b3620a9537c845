/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Names of the kernel's skb drop reasons, read from its BTF at run time:
 * enum skb_drop_reason grows and renumbers between kernels, so no table
 * is ever compiled in. */
#ifndef KMON_DROP_REASON_H
#define KMON_DROP_REASON_H

#include <stddef.h>
#include <stdint.h>

struct btf;
struct drop_reasons;

#define DROP_REASON_PREFIX "SKB_DROP_REASON_"

/* Reads enum skb_drop_reason from btf (NULL: the running kernel's,
 * /sys/kernel/btf/vmlinux). Returns NULL with errno set (ENOENT: no such
 * enum). */
struct drop_reasons *drop_reasons__new(const struct btf *btf);
void drop_reasons__free(struct drop_reasons *r); /* NULL-safe */

size_t drop_reasons__count(const struct drop_reasons *r);
/* The name without the SKB_DROP_REASON_ prefix ("NO_SOCKET"); names
 * without it stay whole ("SKB_CONSUMED"). NULL for a value the enum does
 * not name (another subsystem's reason, or a newer kernel's). */
const char *drop_reasons__name(const struct drop_reasons *r, uint32_t value);
/* The value named name (either form), or -1. */
int64_t drop_reasons__value(const struct drop_reasons *r, const char *name);

#endif
