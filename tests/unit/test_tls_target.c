// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Where a process's OpenSSL is (user/collectors/tcp/tls_target.c): curl's
 * libssl.so.3 found through its libraries' DT_NEEDED is the file it maps;
 * a program without OpenSSL has none; a pid gone is told apart. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "collectors/tcp/tls_symbols.h"
#include "collectors/tcp/tls_target.h"
#include "unit.h"

/* curl, blocked reading its config from a pipe: its pid, *wfd the
 * pipe's end that lets it go. */
static pid_t start_curl(int *wfd)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[0], 0);
		close(fds[1]);
		close(2); /* its complaint at the end: no URL */
		execl("/usr/bin/curl", "curl", "-s", "--config", "-", NULL);
		_exit(127);
	}
	close(fds[0]);
	*wfd = fds[1];
	return pid;
}

/* sleep, once it has become sleep (its exec done): its pid. */
static pid_t start_sleep(void)
{
	char exe[64], path[PATH_MAX];
	pid_t pid = fork();
	ssize_t got;

	if (pid == 0) {
		execl("/bin/sleep", "sleep", "60", NULL);
		_exit(127);
	}
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	for (int tries = 0; pid > 0 && tries < 200; tries++) {
		got = readlink(exe, path, sizeof(path) - 1);
		if (got > 0) {
			path[got] = '\0';
			if (strstr(path, "/sleep"))
				return pid;
		}
		usleep(10000);
	}
	return -1;
}

static bool same_file(uint32_t pid, const char *a, const char *b)
{
	char pa[PATH_MAX + 64], pb[PATH_MAX + 64];
	struct stat sa, sb;

	return tls_target_path(pid, a, pa, sizeof(pa)) &&
	       tls_target_path(pid, b, pb, sizeof(pb)) && !stat(pa, &sa) &&
	       !stat(pb, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* A function of this program, found by its name. */
int tls_target_marker(void);
int tls_target_marker(void)
{
	return 42;
}

/* Where fn is in its file, by the mapping it runs from: what a uprobe's
 * offset must be. 0: not found. */
static uint64_t mapped_offset(const void *fn)
{
	unsigned long start, end, off, at = (unsigned long)fn;
	char line[512];
	uint64_t found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) == 3 &&
		    at >= start && at < end)
			found = at - start + off;
	if (f)
		fclose(f);
	return found;
}

/* The file offsets of functions: this program's own, where it runs it
 * from; none for a name it lacks. */
static void check_offsets(void)
{
	const char *const names[] = { "tls_target_marker", "no_such_fn" };
	uint64_t offs[2];

	CHECK(elf_funcs__file_offsets("/proc/self/exe", names, 2, offs) == 1);
	CHECK(offs[0] != 0);
	CHECK(offs[0] == mapped_offset((const void *)tls_target_marker));
	CHECK(offs[1] == 0);
	CHECK(elf_funcs__file_offsets("/nonexistent", names, 2, offs) ==
	      -ENOENT);
	CHECK(tls_target_marker() == 42);
}

int main(void)
{
	struct tls_targets *t = tls_targets__new();
	char linked[PATH_MAX], mapped[PATH_MAX];
	int wfd = -1, tries;
	pid_t curl = start_curl(&wfd), plain, dead;

	CHECK(curl > 0);
	/* mapped once its dynamic linker ran */
	for (tries = 0; tries < 200; tries++) {
		if (!tls_targets__find(t, curl, mapped, sizeof(mapped)))
			break;
		usleep(10000);
	}
	CHECK(tries < 200);
	CHECK(strstr(mapped, "/libssl.so.3") != NULL);
	CHECK(tls_targets__linked(t, curl, linked, sizeof(linked)) == 0);
	CHECK(strstr(linked, "/libssl.so.3") != NULL);
	CHECK(same_file(curl, linked, mapped));
	/* the second time from what it remembers of the program */
	CHECK(tls_targets__linked(t, curl, linked, sizeof(linked)) == 0);
	CHECK(same_file(curl, linked, mapped));
	close(wfd);
	waitpid(curl, NULL, 0);

	/* sleep links no OpenSSL (this test may: librdkafka does, and a
	 * sanitizer build keeps every library it was linked with) */
	plain = start_sleep();
	CHECK(plain > 0);
	CHECK(tls_targets__find(t, plain, linked, sizeof(linked)) == -ENOENT);
	kill(plain, SIGKILL);
	waitpid(plain, NULL, 0);
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	CHECK(tls_targets__find(t, dead, linked, sizeof(linked)) == -ESRCH);
	tls_targets__free(t);
	check_offsets();
	return unit_done("tls_target");
}
