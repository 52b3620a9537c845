/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A minimal unit-test harness: each CHECK prints nothing on success and a
 * "file:line: FAIL ..." line on failure; unit_done() prints the closing tally
 * that tests/run parses ("unit <name>: N passed, N failed"). */
#ifndef KMON_UNIT_H
#define KMON_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int unit_passed, unit_failed;

#define CHECK(cond)                                                   \
	do {                                                          \
		if (cond) {                                           \
			unit_passed++;                                \
		} else {                                              \
			unit_failed++;                                \
			fprintf(stderr, "%s:%d: FAIL %s\n", __FILE__, \
				__LINE__, #cond);                     \
		}                                                     \
	} while (0)

#define CHECK_STR(got, want)                                                  \
	do {                                                                  \
		const char *g_ = (got), *w_ = (want);                         \
		if (g_ && w_ && strcmp(g_, w_) == 0) {                        \
			unit_passed++;                                        \
		} else {                                                      \
			unit_failed++;                                        \
			fprintf(stderr,                                       \
				"%s:%d: FAIL %s\n  got:  %s\n  want: %s\n",   \
				__FILE__, __LINE__, #got, g_ ? g_ : "(null)", \
				w_ ? w_ : "(null)");                          \
		}                                                             \
	} while (0)

/* Writes text into a new file named from path ("/tmp/x-XXXXXX", changed
 * in place), for code that reads files (kallsyms, /proc); exits on error.
 * The caller unlinks it. */
static inline void unit_tmpfile(char *path, const char *text)
{
	int fd = mkstemp(path);
	size_t len = strlen(text);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror(path);
		exit(1);
	}
	close(fd);
}

#ifdef KMON_KSYMS_H
/* A kernel symbol table from kallsyms text. */
static inline struct ksyms *unit_ksyms(const char *text)
{
	char path[] = "/tmp/kmond-kallsyms-XXXXXX";
	struct ksyms *ks;

	unit_tmpfile(path, text);
	ks = ksyms__load(path);
	unlink(path);
	return ks;
}
#endif

/* For a test that needs a privilege this user lacks: tests/run counts
 * exit 77 after "SKIP: reason" as skipped. _exit, so that what the test
 * holds is no leak to LeakSanitizer (SANITIZE=1). */
__attribute__((noreturn)) static inline void unit_skip(const char *reason)
{
	printf("SKIP: %s\n", reason);
	fflush(stdout);
	_exit(77);
}

static inline int unit_done(const char *name)
{
	printf("unit %s: %d passed, %d failed\n", name, unit_passed,
	       unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
