// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/hashmap.h"
#include "lib/xalloc.h"
#include "sym/usyms.h"

struct sym {
	uint64_t addr;
	uint64_t size; /* 0: unknown, up to the next symbol */
	uint32_t name; /* offset in names */
};

struct seg {
	uint64_t off, vaddr, filesz;
};

struct elf_syms {
	struct sym *syms;
	size_t nsyms;
	char *names;
	size_t names_len, names_cap;
	struct seg *segs;
	size_t nsegs;
};

/* --- one binary --- */

static int add_name(struct elf_syms *es, const char *name, uint32_t *at)
{
	size_t n = strlen(name) + 1;

	if (es->names_len + n > es->names_cap) {
		size_t cap = es->names_cap ? es->names_cap * 2 : 4096;
		char *p;

		while (cap < es->names_len + n)
			cap *= 2;
		p = xrealloc(es->names, cap);
		es->names = p;
		es->names_cap = cap;
	}
	memcpy(es->names + es->names_len, name, n);
	*at = (uint32_t)es->names_len;
	es->names_len += n;
	return 0;
}

static int read_segments(struct elf_syms *es, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	es->segs = xcalloc(n ? n : 1, sizeof(*es->segs));
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		es->segs[es->nsegs++] =
			(struct seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	return 0;
}

static bool is_function(const GElf_Sym *s)
{
	int type = GELF_ST_TYPE(s->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       s->st_shndx != SHN_UNDEF && s->st_value;
}

static int read_symtab(struct elf_syms *es, Elf *elf, Elf_Scn *scn,
		       const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	struct sym *more;

	if (!data || !n)
		return 0;
	more = xrealloc(es->syms, (es->nsyms + n) * sizeof(*es->syms));
	es->syms = more;
	for (size_t i = 0; i < n; i++) {
		struct sym *out = &es->syms[es->nsyms];
		const char *name;
		GElf_Sym s;

		if (!gelf_getsym(data, (int)i, &s) || !is_function(&s))
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (add_name(es, name, &out->name))
			return -ENOMEM;
		out->addr = s.st_value;
		out->size = s.st_size;
		es->nsyms++;
	}
	return 0;
}

/* By address; among aliases the sized one first, then the lower name
 * offset (.dynsym's public name before .symtab's internal one), so the
 * choice is stable. */
static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static void sort_unique(struct elf_syms *es)
{
	size_t out = 0;

	if (!es->nsyms) /* syms is NULL: qsort's argument must not be */
		return;
	qsort(es->syms, es->nsyms, sizeof(*es->syms), sym_cmp);
	for (size_t i = 0; i < es->nsyms; i++)
		if (!out || es->syms[out - 1].addr != es->syms[i].addr)
			es->syms[out++] = es->syms[i];
	es->nsyms = out;
}

static int read_symbols(struct elf_syms *es, Elf *elf)
{
	Elf_Scn *scn = NULL;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		err = read_symtab(es, elf, scn, &sh);
		if (err)
			return err;
	}
	sort_unique(es);
	return 0;
}

struct elf_syms *elf_syms__read(int fd)
{
	struct elf_syms *es;
	Elf *elf;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		errno = ENOEXEC;
		return NULL;
	}
	es = calloc(1, sizeof(*es));
	err = es ? read_segments(es, elf) : -ENOMEM;
	err = err ?: read_symbols(es, elf);
	elf_end(elf);
	if (err) {
		elf_syms__free(es);
		errno = -err;
		return NULL;
	}
	return es;
}

void elf_syms__free(struct elf_syms *es)
{
	if (!es)
		return;
	free(es->syms);
	free(es->names);
	free(es->segs);
	free(es);
}

size_t elf_syms__count(const struct elf_syms *es)
{
	return es ? es->nsyms : 0;
}

int elf_syms__vaddr(const struct elf_syms *es, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < es->nsegs; i++) {
		const struct seg *s = &es->segs[i];

		if (off >= s->off && off - s->off < s->filesz) {
			*vaddr = off - s->off + s->vaddr;
			return 0;
		}
	}
	return -1;
}

const char *elf_syms__find(const struct elf_syms *es, uint64_t vaddr,
			   uint64_t *off)
{
	size_t lo = 0, hi = es->nsyms;
	const struct sym *s;

	/* the last symbol starting at or below vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (es->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &es->syms[lo - 1];
	if (s->size && vaddr - s->addr >= s->size)
		return NULL;
	*off = vaddr - s->addr;
	return es->names + s->name;
}

/* --- binaries and processes --- */

struct binary {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	struct elf_syms *es; /* NULL: not an ELF file */
	int refs; /* mappings of known processes using it */
	struct binary *next;
};

struct mapping {
	uint64_t start, end, pgoff;
	struct binary *bin; /* NULL: no file (vdso, anonymous JIT code) */
	char *name; /* basename, or "[vdso]"... */
};

struct proc {
	struct mapping *maps;
	size_t n;
	uint64_t epoch; /* when its maps were read */
	bool exited; /* found exited (at a tick, or its maps gone) */
};

struct usyms {
	struct hashmap *procs; /* pid -> struct proc * */
	struct binary *bins;
	size_t nbins, max_binaries;
	uint64_t epoch;
};

struct usyms *usyms__new(size_t max_binaries)
{
	struct usyms *u = xcalloc(1, sizeof(*u));

	u->procs = hashmap__new();
	u->max_binaries = max_binaries;
	u->epoch = 1;
	return u;
}

static struct binary *binary_get(struct usyms *u, int fd)
{
	struct binary *b;
	struct stat st;

	if (fstat(fd, &st))
		return NULL;
	for (b = u->bins; b; b = b->next)
		if (b->dev == st.st_dev && b->ino == st.st_ino &&
		    b->mtime.tv_sec == st.st_mtim.tv_sec &&
		    b->mtime.tv_nsec == st.st_mtim.tv_nsec)
			break;
	if (!b) {
		b = xcalloc(1, sizeof(*b));
		b->dev = st.st_dev;
		b->ino = st.st_ino;
		b->mtime = st.st_mtim;
		b->es = elf_syms__read(fd);
		b->next = u->bins;
		u->bins = b;
		u->nbins++;
	}
	b->refs++;
	return b;
}

/* The file behind a mapping: its path seen from the process's root (it
 * may live in another mount namespace), else map_files (deleted
 * binaries; needs privileges kmond may have dropped). */
static struct binary *mapping_binary(struct usyms *u, uint32_t pid,
				     const struct mapping *m, const char *file)
{
	struct binary *b;
	char path[PATH_MAX + 32];
	int fd = -1;

	if (file[0] == '/' && snprintf(path, sizeof(path), "/proc/%u/root%s",
				       pid, file) < (int)sizeof(path))
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(path, sizeof(path),
			 "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid,
			 m->start, m->end);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return NULL;
	b = binary_get(u, fd);
	close(fd);
	return b;
}

static void proc_free(void *v)
{
	struct proc *p = v;

	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		if (p->maps[i].bin)
			p->maps[i].bin->refs--;
		free(p->maps[i].name);
	}
	free(p->maps);
	free(p);
}

/* Cuts the newline and a " (deleted)" mark off a maps line's path;
 * true when there was one. */
static bool trim_path(char *path)
{
	size_t n = strcspn(path, "\n");
	bool deleted = n > 10 && !strncmp(path + n - 10, " (deleted)", 10);

	path[deleted ? n - 10 : n] = '\0';
	return deleted;
}

/* Parses one /proc/PID/maps line into m if it is an executable mapping;
 * *file points into line at its path. */
static bool parse_maps_line(char *line, struct mapping *m, unsigned long *ino,
			    char **file)
{
	unsigned long long start, end, pgoff;
	char perms[8];
	bool deleted;
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %lu %n", &start, &end,
		   perms, &pgoff, ino, &pos) < 5 ||
	    !pos || perms[2] != 'x')
		return false;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	*file = line + pos;
	deleted = trim_path(*file);
	m->name = strdup(strrchr(*file, '/') ? strrchr(*file, '/') + 1 : *file);
	/* Whatever has its path now is another file. */
	if (deleted)
		**file = '\0';
	return m->name != NULL;
}

static int read_maps(struct usyms *u, uint32_t pid, struct proc *p)
{
	char path[64], *line = NULL;
	size_t cap = 0, len = 0;
	FILE *f;

	p->epoch = u->epoch; /* read, or tried: once a tick */
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f) {
		p->exited = errno == ENOENT;
		return -errno;
	}
	while (getline(&line, &len, f) > 0) {
		struct mapping m = { 0 };
		unsigned long ino;
		char *file;

		if (!parse_maps_line(line, &m, &ino, &file))
			continue;
		if (p->n == cap) {
			struct mapping *more;

			cap = cap ? cap * 2 : 16;
			more = realloc(p->maps, cap * sizeof(*more));
			if (!more) {
				free(m.name);
				break;
			}
			p->maps = more;
		}
		m.bin = ino ? mapping_binary(u, pid, &m, file) : NULL;
		p->maps[p->n++] = m;
	}
	free(line);
	fclose(f);
	return 0;
}

static struct proc *proc_get(struct usyms *u, uint32_t pid)
{
	uint64_t *slot = hashmap__find(u->procs, pid);
	struct proc *p;

	if (slot)
		return (struct proc *)(uintptr_t)*slot;
	p = xcalloc(1, sizeof(*p));
	/* A process gone already keeps an empty table: no retry per frame. */
	read_maps(u, pid, p);
	hashmap__set(u->procs, pid, (uintptr_t)p);
	return p;
}

static const struct mapping *find_mapping(const struct proc *p, uint64_t addr)
{
	for (size_t i = 0; i < p->n; i++)
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

static const struct mapping *lookup(struct usyms *u, uint32_t pid,
				    uint64_t addr)
{
	struct proc *p = proc_get(u, pid);
	const struct mapping *m;

	if (!p)
		return NULL;
	m = find_mapping(p, addr);
	/* an exited process's maps cannot be read again: keep what was */
	if (m || p->epoch == u->epoch || p->exited)
		return m;
	/* Mapped since we read its maps (dlopen, JIT): read them again. */
	usyms__forget(u, pid);
	p = proc_get(u, pid);
	return p ? find_mapping(p, addr) : NULL;
}

int usyms__format(struct usyms *u, uint32_t pid, uint64_t addr, char *buf,
		  size_t len)
{
	const struct mapping *m = lookup(u, pid, addr);
	uint64_t off, vaddr, symoff;
	const char *name;

	if (!m)
		return snprintf(buf, len, "[unknown] 0x%" PRIx64, addr);
	off = addr - m->start + m->pgoff;
	if (m->bin && m->bin->es && !elf_syms__vaddr(m->bin->es, off, &vaddr)) {
		name = elf_syms__find(m->bin->es, vaddr, &symoff);
		if (name)
			return snprintf(buf, len, "%s+0x%" PRIx64, name,
					symoff);
	}
	return snprintf(buf, len, "[unknown] %s+0x%" PRIx64, m->name, off);
}

void usyms__forget(struct usyms *u, uint32_t pid)
{
	uint64_t *slot = hashmap__find(u->procs, pid);

	if (!slot)
		return;
	proc_free((void *)(uintptr_t)*slot);
	hashmap__delete(u->procs, pid);
}

/* Processes that exited without being forgotten (their keys went idle
 * before they exited): their mappings go at the tick after the one that
 * found them exited (even if the pid is in use again by then: the new
 * process's maps are read afresh). A process that exits between a drain
 * and the tick after it left blocks the next drain reads: they need its
 * mappings. */
static void forget_exited(struct usyms *u)
{
	uint64_t pid, val, *dead = NULL;
	size_t pos = 0, n = 0, cap = 0;

	while (hashmap__next(u->procs, &pos, &pid, &val)) {
		struct proc *p = (struct proc *)(uintptr_t)val;

		if (!p->exited) {
			p->exited = kill((pid_t)pid, 0) && errno == ESRCH;
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			dead = xrealloc(dead, cap * sizeof(*dead));
		}
		dead[n++] = pid;
	}
	for (size_t i = 0; i < n; i++)
		usyms__forget(u, (uint32_t)dead[i]);
	free(dead);
}

void usyms__tick(struct usyms *u)
{
	struct binary **pp = &u->bins;

	u->epoch++;
	forget_exited(u);
	/* Unused tables go once over the bound: the newest are kept at the
	 * head of the list, so the oldest unused go first. */
	for (size_t kept = 0; *pp;) {
		struct binary *b = *pp;

		if (b->refs || ++kept <= u->max_binaries) {
			pp = &b->next;
			continue;
		}
		*pp = b->next;
		elf_syms__free(b->es);
		free(b);
		u->nbins--;
	}
}

size_t usyms__binaries(const struct usyms *u)
{
	return u->nbins;
}

void usyms__free(struct usyms *u)
{
	if (!u)
		return;
	hashmap__free_values(u->procs, proc_free);
	while (u->bins) {
		struct binary *b = u->bins;

		u->bins = b->next;
		elf_syms__free(b->es);
		free(b);
	}
	free(u);
}
