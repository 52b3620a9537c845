// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Block device names: /proc/partitions parsing, the reread when a device
 * appears, and the sysfs and "major:minor" fallbacks. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "provider/disks.h"
#include "unit.h"

#define DEV(ma, mi) ((uint32_t)(ma) << 20 | (mi))

static const char partitions[] = "major minor  #blocks  name\n"
				 "\n"
				 " 254        0  268435456 vda\n"
				 " 254        1     523264 vda1\n"
				 " 259        0 1000204632 nvme0n1\n"
				 "   8       16  976762584 sdb\n"
				 "   7        0 bad line\n"
				 " 253        3     102400 dm-3 trailing\n"
				 "4095  1048575          1 maxed";

static void test_parse(void)
{
	struct disks *d = disks__new("/nonexistent");

	CHECK(disks__parse(d, partitions) == 5);
	CHECK_STR(disks__name(d, DEV(254, 0)), "vda");
	CHECK_STR(disks__name(d, DEV(254, 1)), "vda1");
	CHECK_STR(disks__name(d, DEV(259, 0)), "nvme0n1");
	CHECK_STR(disks__name(d, DEV(8, 16)), "sdb");
	/* The last line has no newline; the largest numbers still fit. */
	CHECK_STR(disks__name(d, DEV(4095, 1048575)), "maxed");
	/* Malformed lines are no entry: the fallback names them. */
	CHECK_STR(disks__name(d, DEV(7, 0)), "7:0");
	CHECK_STR(disks__name(d, DEV(253, 3)), "253:3");
	CHECK(disks__parse(d, "") == 0);
	CHECK(disks__parse(d, "major minor  #blocks  name\n") == 0);
	disks__free(d);
	disks__free(NULL);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* A fake root: /proc/partitions and /sys/dev/block links. */
static void test_reload(void)
{
	char root[] = "/tmp/kmond-disks-XXXXXX", path[256];
	struct disks *d;

	CHECK(mkdtemp(root) != NULL);
	snprintf(path, sizeof(path), "%s/proc", root);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/sys/dev/block", root);
	snprintf(path, sizeof(path), "mkdir -p %s/sys/dev/block", root);
	CHECK(system(path) == 0);
	snprintf(path, sizeof(path), "%s/proc/partitions", root);
	write_file(path, "major minor  #blocks  name\n 254 0 1 vda\n");

	d = disks__new(root);
	/* First lookup reads the file. */
	CHECK_STR(disks__name(d, DEV(254, 0)), "vda");
	/* A size-zero device is only in sysfs. */
	snprintf(path, sizeof(path), "%s/sys/dev/block/252:0", root);
	CHECK(symlink("../../devices/virtual/block/zram0", path) == 0);
	/* Read less than a second ago: not reread yet. */
	CHECK_STR(disks__name(d, DEV(252, 0)), "252:0");
	sleep(1);
	CHECK_STR(disks__name(d, DEV(252, 0)), "zram0");
	/* A disk that appears later is found by the reread. */
	snprintf(path, sizeof(path), "%s/proc/partitions", root);
	write_file(path, "major minor  #blocks  name\n 254 0 1 vda\n"
			 " 8 0 1 sda\n");
	sleep(1);
	CHECK_STR(disks__name(d, DEV(8, 0)), "sda");
	CHECK_STR(disks__name(d, DEV(254, 0)), "vda");
	disks__free(d);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	CHECK(system(path) == 0);
}

int main(void)
{
	test_parse();
	test_reload();
	return unit_done("disks");
}
