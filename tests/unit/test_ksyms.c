/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "sym/ksyms.h"

/* Lines that must be rejected and counted; keep BAD_LINES in step. */
static const char *const bad_lines[] = {
	"zzzzzzzz81000000 T nothex",
	"ffffffff81000300", /* one field */
	"ffffffff81000310 T", /* no name */
	"", /* empty line */
	"ffffffff81000500 T bad\001name", /* control byte */
	"ffffffff81000510 T tab\tname", /* tail is not [module] */
	"ffffffff81000600 T foo\t[mod", /* unterminated module */
	"fffffffff81000700 T seventeen_digits",
	"ffffffff81000800 TT twochar",
	"ffffffff81000900 T foo extra",
	"0xffffffff8100a0 T prefixed",
	" ffffffff8100b00 T leading_blank",
};
#define BAD_LINES (sizeof(bad_lines) / sizeof(bad_lines[0]) + 1) /* +5000 */

static void write_kallsyms(FILE *f)
{
	char name[5001];
	size_t i;

	fputs("ffffffff81000000 T _stext\n", f);
	fputs("ffffffff81000000 T _text\n", f); /* alias: _stext must win */
	fputs("ffffffff81000100 t do_one\n", f);
	fputs("ffffffff81000200 T tcp_v4_rcv\n", f);
	fputs("0000000000000000 T hidden_by_kptr_restrict\n", f);
	fputs("ffffffffc0001000 t mod_fn\t[mymod]\n", f);
	fputs("ffffffffc0001100 T mod_fn2\t[mymod]\n", f);
	fputs("ffffffffc0002000 t other_fn\t[other]\n", f);
	fputs("FFFFFFFF80F00000 T early_upper_hex\n", f); /* out of order */
	for (i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++)
		fprintf(f, "%s\n", bad_lines[i]);
	memset(name, 'a', 5000);
	name[5000] = '\0';
	fprintf(f, "ffffffff81000400 T %s\n", name);
	/* the longest name the kernel allows is fine */
	memset(name, 'b', KSYM_NAME_MAX - 1);
	name[KSYM_NAME_MAX - 1] = '\0';
	fprintf(f, "ffffffff81001000 T %s\n", name);
	fputs("ffffffff81002000 W no_newline_at_eof", f);
}

static const char *fmt(const struct ksyms *ks, uint64_t addr)
{
	static char buf[128];

	ksyms__format(ks, addr, buf, sizeof(buf));
	return buf;
}

static void test_synthetic(void)
{
	char path[] = "/tmp/kmond-kallsyms-XXXXXX";
	const struct ksym *s;
	struct ksyms *ks;
	char small[5];
	FILE *f;
	int fd;

	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	write_kallsyms(f);
	fclose(f);
	ks = ksyms__load(path);
	unlink(path);
	CHECK(ks != NULL);
	if (!ks)
		return;

	CHECK(ksyms__bad_lines(ks) == BAD_LINES);
	/* 11 good lines less the alias and the zero address */
	CHECK(ksyms__count(ks) == 9);

	CHECK(ksyms__find(ks, 0) == NULL);
	CHECK(ksyms__find(ks, 0xffffffff80efffffULL) == NULL);
	s = ksyms__find(ks, 0xffffffff80f00000ULL);
	CHECK(s && strcmp(s->name, "early_upper_hex") == 0 && !s->module);
	s = ksyms__find(ks, 0xffffffff81000000ULL);
	CHECK(s && strcmp(s->name, "_stext") == 0 && s->type == 'T');
	s = ksyms__find(ks, 0xffffffff81000100ULL);
	CHECK(s && strcmp(s->name, "do_one") == 0 && s->type == 't');
	s = ksyms__find(ks, 0xffffffffc0001080ULL);
	CHECK(s && strcmp(s->name, "mod_fn") == 0 && s->module &&
	      strcmp(s->module, "mymod") == 0);
	s = ksyms__find(ks, 0xffffffffc0001100ULL);
	CHECK(s && s->module && strcmp(s->module, "mymod") == 0);
	s = ksyms__find(ks, 0xffffffffc0002000ULL);
	CHECK(s && s->module && strcmp(s->module, "other") == 0);
	s = ksyms__find(ks, 0xffffffff81001000ULL);
	CHECK(s && strlen(s->name) == KSYM_NAME_MAX - 1);
	s = ksyms__find(ks, UINT64_MAX);
	CHECK(s && strcmp(s->name, "other_fn") == 0);

	CHECK_STR(fmt(ks, 0xffffffff81000000ULL), "_stext+0x0");
	CHECK_STR(fmt(ks, 0xffffffff810000ffULL), "_stext+0xff");
	CHECK_STR(fmt(ks, 0xffffffff810003a2ULL), "tcp_v4_rcv+0x1a2");
	CHECK_STR(fmt(ks, 0xffffffff81002abcULL), "no_newline_at_eof+0xabc");
	CHECK_STR(fmt(ks, 0xffffffffc0001001ULL), "mod_fn+0x1");
	CHECK_STR(fmt(ks, 0x1234), "[unknown] 0x1234");
	CHECK_STR(fmt(ks, 0xffffffff80e00000ULL),
		  "[unknown] 0xffffffff80e00000");
	CHECK_STR(fmt(NULL, 0xffffffff81000000ULL),
		  "[unknown] 0xffffffff81000000");

	/* snprintf contract: full length back, output cut and terminated */
	CHECK(ksyms__format(ks, 0xffffffff81000201ULL, small, sizeof(small)) ==
	      (int)strlen("tcp_v4_rcv+0x1"));
	CHECK_STR(small, "tcp_");
	CHECK(ksyms__format(ks, 0xffffffff81000201ULL, NULL, 0) == 14);

	ksyms__free(ks);
}

static void test_missing_and_null(void)
{
	errno = 0;
	CHECK(ksyms__load("/nonexistent/kallsyms") == NULL);
	CHECK(errno == ENOENT);
	CHECK(ksyms__find(NULL, 1) == NULL);
	CHECK(ksyms__count(NULL) == 0);
	ksyms__free(NULL);
}

/* Reads the address of "T name" (vmlinux only) the way a human would. */
static uint64_t kallsyms_addr(const char *name)
{
	char line[1024], sym[600], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *f;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %599s", &addr, &type, sym) == 3 &&
		    type == 'T' && strcmp(sym, name) == 0 &&
		    !strchr(line, '[')) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

static void test_real_kallsyms(void)
{
	uint64_t addr = kallsyms_addr("tcp_v4_rcv");
	struct ksyms *ks;

	ks = ksyms__load(NULL);
	CHECK(ks != NULL);
	if (!ks)
		return;
	/* real kallsyms must parse cleanly, or we'd be losing symbols */
	CHECK(ksyms__bad_lines(ks) == 0);
	if (addr == 0) {
		fprintf(stderr, "note: tcp_v4_rcv address hidden, skipped\n");
	} else {
		CHECK(ksyms__count(ks) > 1000);
		CHECK_STR(fmt(ks, addr), "tcp_v4_rcv+0x0");
		CHECK_STR(fmt(ks, addr + 5), "tcp_v4_rcv+0x5");
		CHECK(strncmp(fmt(ks, addr - 1), "tcp_v4_rcv+", 11) != 0);
	}
	ksyms__free(ks);
}

/* Collectors share one table: the second get is the first's, and only the
 * last put frees it (a new get then loads it again). */
static void test_shared(void)
{
	const struct ksyms *a = ksyms__get(), *b = ksyms__get();

	CHECK(a != NULL && a == b);
	ksyms__put(b);
	CHECK(ksyms__find(a, 0xffffffffffffffffULL) != NULL ||
	      ksyms__count(a) == 0); /* still alive after one put */
	ksyms__put(a);
	ksyms__put(NULL);
	b = ksyms__get();
	CHECK(b != NULL);
	ksyms__put(b);
}

int main(void)
{
	test_synthetic();
	test_missing_and_null();
	test_real_kallsyms();
	test_shared();
	return unit_done("ksyms");
}
