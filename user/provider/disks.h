/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Block device names by device number (254:0 -> "vda"), from
 * /proc/partitions, read again when a device it does not know shows up
 * (hot-plugged disks, new loop or dm devices). Devices it omits (those of
 * size zero) are looked up in /sys/dev/block. */
#ifndef KMON_DISKS_H
#define KMON_DISKS_H

#include <stdint.h>

#define DISK_NAME_MAX 32 /* the kernel's DISK_NAME_LEN */

struct disks;

/* root: prefix of /proc/partitions and /sys/dev/block (tests point it
 * elsewhere); NULL = "". Returns NULL only when memory runs out. */
struct disks *disks__new(const char *root);
void disks__free(struct disks *d); /* NULL-safe */

/* Replaces the table by the entries of a /proc/partitions text. Lines
 * that are not "major minor blocks name" (the header, blank lines) are
 * skipped. Returns the number of entries. */
int disks__parse(struct disks *d, const char *text);

/* The name of the device (kernel encoding: major << 20 | minor). An
 * unknown device rereads the table (at most once a second); one still
 * unknown is named "major:minor". Valid until the next call. */
const char *disks__name(struct disks *d, uint32_t dev);

#endif
