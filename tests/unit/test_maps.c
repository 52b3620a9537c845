// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPU lists as /sys/devices/system/cpu/possible writes them: the bound of
 * the CPU numbers (what a map indexed by bpf_get_smp_processor_id() needs)
 * is one more than the highest, not the count. */
#include <stdio.h>
#include <string.h>

#include "lib/maps.h"
#include "unit.h"

static int bound(const char *list)
{
	FILE *f = fmemopen((void *)list, strlen(list), "r");
	int b = cpu_list_bound(f);

	fclose(f);
	return b;
}

int main(void)
{
	CHECK(bound("0\n") == 1);
	CHECK(bound("0-1\n") == 2);
	CHECK(bound("0-3,8-11\n") == 12);
	CHECK(bound("0,2,4\n") == 5);
	CHECK(bound("0-127") == 128);
	CHECK(bound("\n") == -1);
	/* this machine's: at least as many numbers as CPUs */
	CHECK(map_cpu_id_bound() >= map_ncpus());
	return unit_done("maps");
}
