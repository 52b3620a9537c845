// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/xalloc.h"
#include "provider/disks.h"

#define MINOR_BITS 20 /* the kernel's MINORBITS */
#define MINOR_MASK ((1U << MINOR_BITS) - 1)
#define RELOAD_NS 1000000000ULL

struct disk {
	uint32_t dev;
	char name[DISK_NAME_MAX];
};

struct disks {
	char root[PATH_MAX / 2];
	struct disk *v;
	size_t n, cap;
	uint64_t loaded_ns; /* monotonic time of the last read, 0: never */
	char unknown[24]; /* "major:minor" of the last unknown device */
};

struct disks *disks__new(const char *root)
{
	struct disks *d = xcalloc(1, sizeof(*d));

	snprintf(d->root, sizeof(d->root), "%s", root ? root : "");
	return d;
}

void disks__free(struct disks *d)
{
	if (!d)
		return;
	free(d->v);
	free(d);
}

static void add(struct disks *d, uint32_t dev, const char *name)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct disk *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return; /* the device stays unnamed */
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n].dev = dev;
	snprintf(d->v[d->n].name, sizeof(d->v[d->n].name), "%s", name);
	d->n++;
}

/* Adds the device of a "major minor blocks name" line; skips others. */
static void parse_line(struct disks *d, const char *line, size_t len)
{
	char buf[128], name[DISK_NAME_MAX + 1];
	unsigned int major, minor;
	unsigned long long blocks;
	int end = 0;

	if (len >= sizeof(buf))
		return;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, "%u %u %llu %32s %n", &major, &minor, &blocks, name,
		   &end) != 4 ||
	    buf[end] != '\0')
		return;
	if (major >= (1U << (32 - MINOR_BITS)) || minor > MINOR_MASK)
		return;
	add(d, major << MINOR_BITS | minor, name);
}

int disks__parse(struct disks *d, const char *text)
{
	const char *line = text;

	d->n = 0;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		parse_line(d, line, len);
		line += len + (nl != NULL);
	}
	return (int)d->n;
}

static void reload(struct disks *d)
{
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	FILE *f;

	d->loaded_ns = mono_ns();
	snprintf(path, sizeof(path), "%s/proc/partitions", d->root);
	f = fopen(path, "re");
	if (!f)
		return;
	/* A few lines per disk: read it whole. */
	if (getdelim(&text, &len, '\0', f) >= 0)
		disks__parse(d, text);
	free(text);
	fclose(f);
}

static const char *find(const struct disks *d, uint32_t dev)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].dev == dev)
			return d->v[i].name;
	return NULL;
}

/* /proc/partitions leaves out devices of size zero; sysfs has them all. */
static const char *from_sysfs(struct disks *d, uint32_t dev)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u", d->root,
		 dev >> MINOR_BITS, dev & MINOR_MASK);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	base = strrchr(target, '/');
	add(d, dev, base ? base + 1 : target);
	return find(d, dev);
}

const char *disks__name(struct disks *d, uint32_t dev)
{
	const char *name = find(d, dev);

	if (name)
		return name;
	if (!d->loaded_ns || mono_ns() - d->loaded_ns >= RELOAD_NS) {
		reload(d);
		name = find(d, dev) ?: from_sysfs(d, dev);
		if (name)
			return name;
	}
	snprintf(d->unknown, sizeof(d->unknown), "%u:%u", dev >> MINOR_BITS,
		 dev & MINOR_MASK);
	return d->unknown;
}
