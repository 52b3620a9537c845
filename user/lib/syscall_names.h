/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The architecture's syscall table, generated at build time. */
#ifndef KMON_SYSCALL_NAMES_H
#define KMON_SYSCALL_NAMES_H

/* NULL for a number the table does not name. */
const char *syscall_name(long nr);
/* -1 for an unknown name. */
int syscall_number(const char *name);

#endif
