// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The ELF symbolizer on this test binary itself (PIE: a load bias), on
 * libc (a shared object, symbols in .dynsym only) and on a mapped file
 * that is no ELF (the "[unknown] module+0xoff" form), and a process that
 * exited keeping its mappings one tick longer. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "sym/usyms.h"

/* noinline and used: a function of our own with a known name and size. */
int usyms_test_target(int x);
__attribute__((noinline, used)) int usyms_test_target(int x)
{
	return x * 3 + 1;
}

int main(void);

static void test_self(struct usyms *u)
{
	uint64_t addr = (uintptr_t)usyms_test_target;
	char buf[256];

	usyms__format(u, getpid(), addr, buf, sizeof(buf));
	CHECK_STR(buf, "usyms_test_target+0x0");
	usyms__format(u, getpid(), addr + 2, buf, sizeof(buf));
	CHECK_STR(buf, "usyms_test_target+0x2");
	usyms__format(u, getpid(), (uintptr_t)main, buf, sizeof(buf));
	CHECK_STR(buf, "main+0x0");
}

static void test_libc(struct usyms *u)
{
	char buf[256];

	usyms__format(u, getpid(), (uintptr_t)clock_nanosleep + 5, buf,
		      sizeof(buf));
	CHECK(strstr(buf, "clock_nanosleep+0x5") != NULL);
	if (!strstr(buf, "clock_nanosleep"))
		fprintf(stderr, "  got %s\n", buf);
}

/* A file mapped executable that is no ELF: named by the mapping. */
static void test_unknown(struct usyms *u)
{
	char path[] = "/tmp/kmon-usyms-XXXXXX", buf[256], want[64];
	static char page[8192];
	unsigned char *m;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, page, sizeof(page)) == sizeof(page));
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 4096);
	CHECK(m != MAP_FAILED);
	if (m != MAP_FAILED) {
		/* mapped after its maps were read: a new interval reads them
		 * again on a miss */
		usyms__tick(u);
		usyms__format(u, getpid(), (uintptr_t)m + 0x10, buf,
			      sizeof(buf));
		snprintf(want, sizeof(want), "[unknown] %s+0x1010",
			 strrchr(path, '/') + 1);
		CHECK_STR(buf, want);
		munmap(m, 4096);
	}
	close(fd);
	unlink(path);
	/* an address in no mapping: the bare address */
	usyms__format(u, getpid(), 0x10, buf, sizeof(buf));
	CHECK_STR(buf, "[unknown] 0x10");
}

/* A process found exited at one tick keeps its mappings until the next:
 * the blocks it left between a drain and that tick are read at the next
 * drain. */
static void test_exited(struct usyms *u)
{
	uint64_t addr = (uintptr_t)usyms_test_target;
	pid_t child = fork();
	char buf[256];

	CHECK(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	if (child < 0)
		return;
	usyms__format(u, child, addr, buf, sizeof(buf));
	CHECK_STR(buf, "usyms_test_target+0x0");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	usyms__tick(u);
	/* an address in none of its mappings (a frame-pointer walk's
	 * garbage): its maps are not read again, nor lost */
	usyms__format(u, child, 0x10, buf, sizeof(buf));
	CHECK_STR(buf, "[unknown] 0x10");
	usyms__format(u, child, addr, buf, sizeof(buf));
	CHECK_STR(buf, "usyms_test_target+0x0");
	usyms__tick(u);
	usyms__format(u, child, addr, buf, sizeof(buf));
	CHECK(strncmp(buf, "[unknown] 0x", 12) == 0);
	usyms__forget(u, child);
}

/* The raw table: file offset -> ELF address -> function, by hand. */
static void test_elf_syms(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	struct elf_syms *es = elf_syms__read(fd);
	const char *name;
	uint64_t off = 0, va = 0;

	CHECK(es != NULL);
	close(fd);
	if (!es)
		return;
	CHECK(elf_syms__count(es) > 10);
	/* the first PT_LOAD of a PIE starts at file offset 0, address 0 */
	CHECK(elf_syms__vaddr(es, 0x10, &va) == 0 && va == 0x10);
	CHECK(elf_syms__vaddr(es, ~0ULL, &va) == -1);
	name = elf_syms__find(es, 0, &off);
	CHECK(name == NULL);
	elf_syms__free(es);
	fd = open("/etc/hostname", O_RDONLY);
	CHECK(elf_syms__read(fd) == NULL);
	close(fd);
}

int main(void)
{
	struct usyms *u = usyms__new(4);

	CHECK(u != NULL);
	test_self(u);
	test_libc(u);
	test_unknown(u);
	test_exited(u);
	test_elf_syms();
	CHECK(usyms__binaries(u) >= 2);
	usyms__forget(u, getpid());
	usyms__tick(u);
	CHECK(usyms__binaries(u) <= 4);
	usyms__free(u);
	return unit_done("usyms");
}
