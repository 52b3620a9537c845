// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/types.h>

#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/bio.h"
#include "bio.skel.h"
#include "collectors/bio_stacks.h"
#include "loader/prealloc.h"
#include "sym/ksyms.h"
#include "sym/kstack.h"
#include "lib/log.h"
#include "lib/maps.h"

struct bio_stacks {
	struct bio_bpf *skel;
	struct kstacks *cache[2]; /* symbolized frames, per map */
	uint64_t lost; /* the kernel's count at the last sweep */
	uint64_t swept;
};

static struct bpf_map *map_of(struct bio_stacks *s, uint32_t gen)
{
	return gen & 1 ? s->skel->maps.bio_kstacks_odd :
			 s->skel->maps.bio_kstacks;
}

struct bio_stacks *bio_stacks__new(struct bio_bpf *skel, bool prealloc)
{
	struct bio_stacks *s = calloc(1, sizeof(*s));
	const char *test = getenv("KMOND_TEST_BIO_STACKS");
	unsigned long entries = BIO_STACK_ENTRIES;

	if (!s)
		return NULL;
	s->skel = skel;
	if (test && atoi(test) > 0)
		entries = atoi(test);
	for (int i = 0; i < 2; i++) {
		int err = 0;

		bpf_map__set_max_entries(map_of(s, i), entries);
		if (prealloc)
			err = prealloc__map(map_of(s, i), PREALLOC_BUDGET / 2);
		if (err) {
			bio_stacks__free(s);
			errno = -err;
			return NULL;
		}
		s->cache[i] = kstacks__new();
	}
	return s;
}

void bio_stacks__free(struct bio_stacks *s)
{
	if (!s)
		return;
	kstacks__free(s->cache[0]);
	kstacks__free(s->cache[1]);
	free(s);
}

const char *const *bio_stacks__frames(struct bio_stacks *s,
				      const struct ksyms *ks,
				      const struct bio_slow_event *e, size_t *n)
{
	uint32_t gen = s->skel->bss->stack_gen;

	*n = 0;
	if (!e->kstack)
		return NULL;
	/* Its map was emptied (and maybe refilled) since the I/O started. */
	if (gen - e->stack_gen > 1) {
		s->swept++;
		return NULL;
	}
	return kstacks__frames(s->cache[e->stack_gen & 1], ks,
			       bpf_map__fd(map_of(s, e->stack_gen)), e->kstack,
			       n);
}

static bool every(void *ctx, const void *key, const void *value)
{
	(void)ctx;
	(void)key;
	(void)value;
	return true;
}

/* Empties the map not in use, then starts using it. Nothing writes the
 * emptied map until the switch; I/Os that started on it two generations
 * back lose their stack (bio_stacks__frames), the others keep theirs. */
static void sweep(struct bio_stacks *s)
{
	uint32_t gen = s->skel->bss->stack_gen;
	int next = (gen + 1) & 1;

	map_sweep(bpf_map__fd(map_of(s, gen + 1)), sizeof(__u64), 0, every,
		  NULL, NULL);
	kstacks__free(s->cache[next]);
	s->cache[next] = kstacks__new();
	__atomic_store_n(&s->skel->bss->stack_gen, gen + 1, __ATOMIC_RELEASE);
	log_debug("bio: stack maps swept (generation %u)", gen + 1);
}

void bio_stacks__collect(struct bio_stacks *s, uint64_t lost)
{
	if (lost > s->lost)
		sweep(s);
	s->lost = lost;
}

uint64_t bio_stacks__swept(const struct bio_stacks *s)
{
	return s->swept;
}
