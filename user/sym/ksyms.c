/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/xalloc.h"
#include "sym/ksyms.h"

/* The kernel's MODULE_NAME_LEN is 56; a little slack costs nothing. */
#define KSYM_MODULE_MAX 64
/* Names live in fixed blocks rather than one realloc'ed buffer so the
 * pointers handed out stay valid while loading; 120k names would otherwise
 * mean 120k mallocs. */
#define ARENA_BLOCK (64 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t used;
	char data[];
};

/* seq (file order) only breaks ties while sorting, so aliases resolve the
 * same way on every load. */
struct ksym_ent {
	struct ksym sym;
	size_t seq;
};

struct ksyms {
	struct ksym_ent *ents;
	size_t n;
	size_t cap;
	size_t bad_lines;
	struct arena_block *arena;
	const char *last_module; /* kallsyms groups a module's symbols */
};

struct ksym_line {
	uint64_t addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module; /* NULL when absent */
	size_t module_len;
};

static char *arena__strndup(struct ksyms *ks, const char *s, size_t len)
{
	struct arena_block *b = ks->arena;
	char *p;

	if (!b || b->used + len + 1 > ARENA_BLOCK) {
		b = xmalloc(sizeof(*b) + ARENA_BLOCK);
		b->used = 0;
		b->next = ks->arena;
		ks->arena = b;
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = '\0';
	b->used += len + 1;
	return p;
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Printable ASCII without blanks: what the kernel emits. Anything else
 * (control bytes, NUL, high bytes) means the line is not kallsyms output,
 * and would otherwise leak into records. */
static size_t span_name(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			break;
	return i;
}

static size_t span_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t')
			break;
	return i;
}

/* Returns the number of characters consumed, 0 if s does not start with
 * 1..16 hex digits followed by a blank. */
static size_t parse_addr(const char *s, size_t len, uint64_t *addr)
{
	uint64_t v = 0;
	size_t i;
	int d;

	for (i = 0; i < len && (d = hex_val(s[i])) >= 0; i++) {
		if (i == 16)
			return 0;
		v = v << 4 | (uint64_t)d;
	}
	if (i == 0 || i == len || s[i] != ' ')
		return 0;
	*addr = v;
	return i + 1;
}

/* Parses the optional "[module]" tail, which must end the line. */
static int parse_module(const char *s, size_t len, struct ksym_line *kl)
{
	size_t n;

	if (len == 0)
		return 0;
	if (len < 3 || s[0] != '[' || s[len - 1] != ']')
		return -1;
	n = span_name(s + 1, len - 2);
	if (n != len - 2 || n >= KSYM_MODULE_MAX || memchr(s + 1, ']', n))
		return -1;
	kl->module = s + 1;
	kl->module_len = n;
	return 0;
}

/* "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo\t[mod]" */
static int parse_line(const char *s, size_t len, struct ksym_line *kl)
{
	size_t i, n;

	memset(kl, 0, sizeof(*kl));
	i = parse_addr(s, len, &kl->addr);
	if (!i)
		return -1;
	if (len - i < 3 || s[i + 1] != ' ' || span_name(s + i, 1) != 1)
		return -1;
	kl->type = s[i];
	i += 2;
	n = span_name(s + i, len - i);
	if (n == 0 || n >= KSYM_NAME_MAX)
		return -1;
	kl->name = s + i;
	kl->name_len = n;
	i += n;
	n = span_blank(s + i, len - i);
	if (i < len && n == 0)
		return -1; /* a control byte inside the name */
	i += n;
	return parse_module(s + i, len - i, kl);
}

static int ksyms__reserve(struct ksyms *ks)
{
	struct ksym_ent *ents;
	size_t cap;

	if (ks->n < ks->cap)
		return 0;
	cap = ks->cap ? ks->cap * 2 : 4096;
	ents = xrealloc(ks->ents, cap * sizeof(*ents));
	ks->ents = ents;
	ks->cap = cap;
	return 0;
}

static const char *ksyms__intern_module(struct ksyms *ks, const char *s,
					size_t len)
{
	const char *last = ks->last_module;

	if (last && strlen(last) == len && memcmp(last, s, len) == 0)
		return last;
	ks->last_module = arena__strndup(ks, s, len);
	return ks->last_module;
}

static int ksyms__add(struct ksyms *ks, const struct ksym_line *kl)
{
	struct ksym_ent *e;

	if (ksyms__reserve(ks))
		return -ENOMEM;
	e = &ks->ents[ks->n];
	e->sym.addr = kl->addr;
	e->sym.type = kl->type;
	e->sym.name = arena__strndup(ks, kl->name, kl->name_len);
	e->sym.module = NULL;
	if (kl->module)
		e->sym.module =
			ksyms__intern_module(ks, kl->module, kl->module_len);
	if (!e->sym.name || (kl->module && !e->sym.module))
		return -ENOMEM;
	e->seq = ks->n++;
	return 0;
}

static int ksyms__read(struct ksyms *ks, FILE *f)
{
	struct ksym_line kl;
	size_t cap = 0;
	char *line = NULL;
	ssize_t len;
	int err = 0;

	while ((len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			len--;
		if (parse_line(line, (size_t)len, &kl)) {
			ks->bad_lines++;
			continue;
		}
		if (kl.addr == 0)
			continue; /* hidden by kptr_restrict: useless */
		err = ksyms__add(ks, &kl);
		if (err)
			break;
	}
	if (!err && ferror(f))
		err = errno ? -errno : -EIO;
	free(line);
	return err;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct ksym_ent *x = a, *y = b;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Aliases (_stext, _text, ...) can never be returned by find, so drop all
 * but the first of each address; that also makes find a plain search. */
static void ksyms__sort(struct ksyms *ks)
{
	size_t i, out = 0;

	qsort(ks->ents, ks->n, sizeof(*ks->ents), ent_cmp);
	for (i = 0; i < ks->n; i++) {
		if (out && ks->ents[out - 1].sym.addr == ks->ents[i].sym.addr)
			continue;
		ks->ents[out++] = ks->ents[i];
	}
	ks->n = out;
}

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms *ks = NULL;
	FILE *f;
	int err;

	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f)
		return NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = ksyms__read(ks, f);
	if (!err)
		ksyms__sort(ks);
cleanup:
	fclose(f);
	if (err) {
		ksyms__free(ks);
		errno = -err;
		return NULL;
	}
	return ks;
}

void ksyms__free(struct ksyms *ks)
{
	struct arena_block *b, *next;

	if (!ks)
		return;
	for (b = ks->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	free(ks->ents);
	free(ks);
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks ? ks->n : 0;
}

size_t ksyms__bad_lines(const struct ksyms *ks)
{
	return ks ? ks->bad_lines : 0;
}

const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi, mid;

	if (!ks || ks->n == 0 || addr < ks->ents[0].sym.addr)
		return NULL;
	/* invariant: ents[lo].addr <= addr < ents[hi].addr (hi == n: +inf) */
	hi = ks->n;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (ks->ents[mid].sym.addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &ks->ents[lo].sym;
}

int ksyms__format(const struct ksyms *ks, uint64_t addr, char *buf, size_t len)
{
	const struct ksym *sym = ksyms__find(ks, addr);

	if (!buf)
		len = 0;
	if (!sym)
		return snprintf(buf, len, "[unknown] 0x%" PRIx64, addr);
	return snprintf(buf, len, "%s+0x%" PRIx64, sym->name, addr - sym->addr);
}

/* The table of this kernel, shared by every collector that symbolizes
 * kernel stacks: each copy costs ~10 MB. */
static struct ksyms *shared;
static int shared_refs;

const struct ksyms *ksyms__get(void)
{
	if (!shared)
		shared = ksyms__load(NULL);
	if (shared)
		shared_refs++;
	return shared;
}

static bool wanted;
static const struct ksyms *preloaded;

void ksyms__want(void)
{
	wanted = true;
}

void ksyms__preload(void)
{
	if (wanted && !preloaded)
		preloaded = ksyms__get();
}

void ksyms__unload(void)
{
	ksyms__put(preloaded);
	preloaded = NULL;
	wanted = false;
}

const struct ksyms *ksyms__need(const struct ksyms **ks, bool *tried,
				const char *who)
{
	if (*tried)
		return *ks;
	*tried = true;
	*ks = ksyms__get();
	if (!*ks || !ksyms__count(*ks))
		log_warn("%s: no kernel symbols (/proc/kallsyms): stacks will "
			 "hold bare addresses",
			 who);
	return *ks;
}

void ksyms__put(const struct ksyms *ks)
{
	if (!ks || ks != shared || --shared_refs > 0)
		return;
	ksyms__free(shared);
	shared = NULL;
}
