// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Where a process's OpenSSL is (see tls_target.h).
 *
 * Right after an exec the process maps only its program and the dynamic
 * linker: to have the uprobes in place before its first SSL call (a
 * short-lived curl makes it within milliseconds), they are attached to
 * the libssl.so.3 the linker will map, and the kernel puts the
 * breakpoints in as the library is mapped. That library is found as the
 * linker finds it: the DT_NEEDED names of the program and, breadth
 * first, of its libraries, looked up in the program's DT_RUNPATH (or
 * DT_RPATH), the directories of /etc/ld.so.conf.d and the default ones,
 * all inside the process's root. LD_LIBRARY_PATH, ld.so.cache entries
 * outside those directories and dlopen() are not followed: such a
 * library is found mapped, at the next look (tls_attach.c). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/tcp/tls_symbols.h"
#include "collectors/tcp/tls_target.h"
#include "lib/hashmap.h"
#include "lib/xalloc.h"

#define MAX_OBJECTS 64 /* libraries read per program, at most */
#define MAX_DIRS 32
#define MAX_PROGRAMS 256 /* programs remembered; then forgotten at once */

/* What a program links, by program and root. */
struct program {
	dev_t dev, root_dev;
	ino_t ino, root_ino;
	int found; /* 0 or -ENOENT */
	char rel[PATH_MAX];
};

struct tls_targets {
	struct hashmap *programs; /* key_of() -> struct program * */
};

/* What one ELF object says: its DT_NEEDED names, its run path, and
 * whether it defines SSL_write. */
struct elf_deps {
	char needed[MAX_OBJECTS][NAME_MAX + 1];
	int nneeded;
	char runpath[PATH_MAX];
	bool has_ssl;
	int machine; /* e_machine and class: the linker maps only its own */
	int class;
};

struct tls_targets *tls_targets__new(void)
{
	struct tls_targets *t = xcalloc(1, sizeof(*t));

	elf_version(EV_CURRENT);
	t->programs = hashmap__new();
	return t;
}

static void free_value(void *v)
{
	free(v);
}

void tls_targets__free(struct tls_targets *t)
{
	if (!t)
		return;
	hashmap__free_values(t->programs, free_value);
	free(t);
}

bool tls_target_path(uint32_t pid, const char *rel, char *path, size_t len)
{
	int n = *rel ? snprintf(path, len, "/proc/%u/root%s", pid, rel) :
		       snprintf(path, len, "/proc/%u/exe", pid);

	return n >= 0 && (size_t)n < len;
}

/* The libssl.so.3 pid maps, into rel: -ENOENT none, -ESRCH gone. */
static int mapped_lib(uint32_t pid, char *rel, size_t len)
{
	char maps[64], line[4096], *file;
	int err = -ENOENT;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%u/maps", pid);
	f = fopen(maps, "r");
	if (!f)
		return -ESRCH;
	while (err && fgets(line, sizeof(line), f)) {
		file = strchr(line, '/');
		if (!file || !strstr(file, "/" TLS_LIB))
			continue;
		file[strcspn(file, "\n")] = '\0';
		if ((size_t)snprintf(rel, len, "%s", file) < len)
			err = 0;
	}
	fclose(f);
	return err;
}

static void read_dynamic(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 struct elf_deps *d)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const char *s;
	GElf_Dyn dyn;

	if (!data || !sh->sh_entsize)
		return;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		if (!gelf_getdyn(data, (int)i, &dyn))
			break;
		if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH &&
		    dyn.d_tag != DT_RPATH)
			continue;
		s = elf_strptr(elf, sh->sh_link, dyn.d_un.d_val);
		if (!s)
			continue;
		if (dyn.d_tag != DT_NEEDED)
			snprintf(d->runpath, sizeof(d->runpath), "%s", s);
		else if (d->nneeded < MAX_OBJECTS && strlen(s) <= NAME_MAX)
			strcpy(d->needed[d->nneeded++], s);
	}
}

/* Reads path's dependencies (and, when symbols, whether it defines
 * SSL_write). False: not an ELF object kmond can read. */
static bool read_deps(const char *path, bool symbols, struct elf_deps *d)
{
	static const char *const ssl_write[] = { "SSL_write" };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	uint64_t off;
	Elf *elf;

	memset(d, 0, sizeof(*d));
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(fd);
		return false;
	}
	if (gelf_getehdr(elf, &eh)) {
		d->machine = eh.e_machine;
		d->class = gelf_getclass(elf);
	}
	while ((scn = elf_nextscn(elf, scn)) && gelf_getshdr(scn, &sh))
		if (sh.sh_type == SHT_DYNAMIC)
			read_dynamic(elf, scn, &sh, d);
	if (symbols)
		d->has_ssl = elf_funcs__offsets(elf, ssl_write, 1, &off) == 1;
	elf_end(elf);
	close(fd);
	return true;
}

/* The directories the linker searches, in its order: the program's run
 * path ($ORIGIN: origin), /etc/ld.so.conf.d's, the defaults. */
static int search_dirs(uint32_t pid, const char *runpath, const char *origin,
		       char dirs[][PATH_MAX])
{
	static const char *const defaults[] = { "/lib64", "/usr/lib64", "/lib",
						"/usr/lib" };
	char pattern[64], line[PATH_MAX], *tok, *save, rp[PATH_MAX];
	glob_t g = { 0 };
	int n = 0;
	FILE *f;

	snprintf(rp, sizeof(rp), "%s", runpath);
	for (tok = strtok_r(rp, ":", &save); tok && n < MAX_DIRS;
	     tok = strtok_r(NULL, ":", &save))
		if (strncmp(tok, "$ORIGIN", 7) == 0)
			snprintf(dirs[n++], PATH_MAX, "%s%s", origin, tok + 7);
		else if (*tok == '/')
			snprintf(dirs[n++], PATH_MAX, "%s", tok);
	snprintf(pattern, sizeof(pattern),
		 "/proc/%u/root/etc/ld.so.conf.d/*.conf", pid);
	if (glob(pattern, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++) {
			f = fopen(g.gl_pathv[i], "r");
			while (f && n < MAX_DIRS &&
			       fgets(line, sizeof(line), f))
				if (line[0] == '/') {
					line[strcspn(line, " \t\n")] = '\0';
					snprintf(dirs[n++], PATH_MAX, "%s",
						 line);
				}
			if (f)
				fclose(f);
		}
	globfree(&g);
	for (size_t i = 0; i < sizeof(defaults) / sizeof(*defaults); i++)
		if (n < MAX_DIRS)
			snprintf(dirs[n++], PATH_MAX, "%s", defaults[i]);
	return n;
}

/* name's path in pid's root (rel), the first of dirs that has it for
 * prog's machine; its dependencies into d. */
static bool lookup(uint32_t pid, const char *name, char dirs[][PATH_MAX],
		   int ndirs, const struct elf_deps *prog, char *rel,
		   size_t len, struct elf_deps *d)
{
	char path[PATH_MAX + 64];

	for (int i = 0; i < ndirs; i++) {
		if ((size_t)snprintf(rel, len, "%s/%s", dirs[i], name) >= len ||
		    !tls_target_path(pid, rel, path, sizeof(path)))
			continue;
		if (read_deps(path, false, d) && d->machine == prog->machine &&
		    d->class == prog->class)
			return true;
	}
	return false;
}

static bool seen(char names[][NAME_MAX + 1], int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* The libssl.so.3 the linker will map for pid's program (its deps),
 * breadth first. */
static int linked_lib(uint32_t pid, const struct elf_deps *prog, char *rel,
		      size_t len)
{
	/* too large for the stack; kmond's main thread alone calls this */
	static char queue[MAX_OBJECTS][NAME_MAX + 1];
	static char dirs[MAX_DIRS][PATH_MAX];
	char origin[PATH_MAX] = "", exe[64], lib[PATH_MAX];
	struct elf_deps *d = xmalloc(sizeof(*d));
	int n = 0, ndirs, err = -ENOENT;
	ssize_t got;

	/* $ORIGIN: the program's directory, as the process sees it */
	snprintf(exe, sizeof(exe), "/proc/%u/exe", pid);
	got = readlink(exe, origin, sizeof(origin) - 1);
	origin[got > 0 ? got : 0] = '\0';
	if (strrchr(origin, '/'))
		*strrchr(origin, '/') = '\0';
	ndirs = search_dirs(pid, prog->runpath, origin, dirs);
	for (int i = 0; i < prog->nneeded; i++)
		if (!seen(queue, n, prog->needed[i]))
			strcpy(queue[n++], prog->needed[i]);
	for (int i = 0; i < n && err; i++) {
		if (!lookup(pid, queue[i], dirs, ndirs, prog, lib, sizeof(lib),
			    d))
			continue;
		if (strcmp(queue[i], TLS_LIB) == 0) {
			err = (size_t)snprintf(rel, len, "%s", lib) < len ?
				      0 :
				      -ENOENT;
			continue;
		}
		for (int j = 0; j < d->nneeded && n < MAX_OBJECTS; j++)
			if (!seen(queue, n, d->needed[j]))
				strcpy(queue[n++], d->needed[j]);
	}
	free(d);
	return err;
}

/* What pid's program links, read now. */
static int read_program(uint32_t pid, char *rel, size_t len)
{
	struct elf_deps *prog = xmalloc(sizeof(*prog));
	char exe[64];
	int err;

	snprintf(exe, sizeof(exe), "/proc/%u/exe", pid);
	rel[0] = '\0'; /* OpenSSL linked into the program */
	if (!read_deps(exe, true, prog))
		err = -ESRCH;
	else if (prog->has_ssl)
		err = 0;
	else
		err = linked_lib(pid, prog, rel, len);
	free(prog);
	return err;
}

static uint64_t key_of(const struct stat *exe, const struct stat *root)
{
	return (uint64_t)exe->st_ino * 0x9e3779b97f4a7c15ull ^
	       (uint64_t)exe->st_dev << 40 ^ (uint64_t)root->st_ino << 20 ^
	       root->st_dev;
}

int tls_targets__find(struct tls_targets *t, uint32_t pid, char *rel,
		      size_t len)
{
	int err = mapped_lib(pid, rel, len);

	return err == -ENOENT ? tls_targets__linked(t, pid, rel, len) : err;
}

int tls_targets__linked(struct tls_targets *t, uint32_t pid, char *rel,
			size_t len)
{
	struct stat exe, root;
	struct program *p;
	char path[64];
	uint64_t key, *v;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	if (stat(path, &exe))
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	if (stat(path, &root))
		return -ESRCH;
	key = key_of(&exe, &root);
	v = hashmap__find(t->programs, key);
	p = v ? (struct program *)(uintptr_t)*v : NULL;
	if (!p || p->ino != exe.st_ino || p->dev != exe.st_dev ||
	    p->root_ino != root.st_ino || p->root_dev != root.st_dev) {
		p = xcalloc(1, sizeof(*p));
		*p = (struct program){ exe.st_dev, root.st_dev, exe.st_ino,
				       root.st_ino };
		p->found = read_program(pid, p->rel, sizeof(p->rel));
		/* Gone while read: not its program's answer. Its libraries
		 * are looked up under its root, which goes with it: a
		 * lookup that failed then is no "not linked" to keep for
		 * every later run of the program. */
		if (p->found == -ESRCH || (p->found && access(path, F_OK))) {
			free(p);
			return -ESRCH;
		}
		if (v) {
			free((void *)(uintptr_t)*v);
		} else if (hashmap__count(t->programs) >= MAX_PROGRAMS) {
			hashmap__free_values(t->programs, free_value);
			t->programs = hashmap__new();
		}
		hashmap__set(t->programs, key, (uintptr_t)p);
	}
	if (p->found)
		return p->found;
	return (size_t)snprintf(rel, len, "%s", p->rel) < len ? 0 : -ENOENT;
}
