// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "lib/array.h"
#include "lib/syscall_names.h"
#include "syscall_table.h"

#define NR_SYSCALL_SLOTS ((long)ARRAY_SIZE(syscall_table))

const char *syscall_name(long nr)
{
	if (nr < 0 || nr >= NR_SYSCALL_SLOTS)
		return NULL;
	return syscall_table[nr];
}

int syscall_number(const char *name)
{
	for (long nr = 0; nr < NR_SYSCALL_SLOTS; nr++)
		if (syscall_table[nr] && strcmp(syscall_table[nr], name) == 0)
			return (int)nr;
	return -1;
}
