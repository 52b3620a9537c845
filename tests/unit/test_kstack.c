// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kernel stacks read from a stack map as the kernel leaves them: cut short
 * by zeros (a stack shallower than the map's depth), full to the depth,
 * empty, or gone (an id the map no longer holds); and from a map of
 * stacks kept by hash (bpf/kstack.bpf.h), symbolized once until
 * forgotten, and swept once the map fills. Needs root: it makes BPF maps standing in for the programs'. */
#include <linux/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/kstack.h"
#include "sym/ksyms.h"
#include "sym/kstack.h"
#include "unit.h"

#define DEPTH 4

static const char kallsyms[] = "ffffffff81000000 T fn_a\n"
			       "ffffffff81000100 T fn_b\n"
			       "ffffffff81000200 T fn_c\n";

static void put(int fd, int id, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t ips[DEPTH] = { a, b, c, d };

	CHECK(bpf_map_update_elem(fd, &id, ips, BPF_ANY) == 0);
}

/* Stacks kept by hash: a hash map of struct kstack under u64 keys. */
static void check_by_hash(const struct ksyms *ks)
{
	struct kstacks *t = kstacks__new();
	struct kstack stack = { { 0xffffffff81000010, 0xffffffff81000230 } };
	const char *const *f;
	uint64_t h = 0x1234567890abcdefULL, other = 77;
	size_t n;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "kstacks_test", sizeof(h),
			    sizeof(stack), 16, NULL);
	CHECK(fd >= 0);
	CHECK(bpf_map_update_elem(fd, &h, &stack, BPF_ANY) == 0);
	f = kstacks__frames(t, ks, fd, h, &n);
	CHECK(f && n == 2);
	if (f && n == 2) {
		CHECK_STR(f[0], "fn_a+0x10");
		CHECK_STR(f[1], "fn_c+0x30");
	}
	f = kstacks__frames(t, ks, fd, 0, &n); /* no stack taken */
	CHECK(!f && n == 0);
	f = kstacks__frames(t, ks, fd, other, &n); /* not in the map */
	CHECK(!f && n == 0);
	/* Symbolized once: served from the table after the map lost it,
	 * until forgotten. */
	CHECK(bpf_map_delete_elem(fd, &h) == 0);
	f = kstacks__frames(t, ks, fd, h, &n);
	CHECK(f && n == 2);
	kstacks__forget(t, h);
	kstacks__forget(t, other); /* never read: nothing to do */
	f = kstacks__frames(t, ks, fd, h, &n);
	CHECK(!f && n == 0);
	close(fd);
	kstacks__free(t);
}

/* A sweep, once the map is three quarters full by the stacks asked for
 * (or the programs found it full), takes the stacks no record asked for
 * in this interval or the last: those never asked for, and those last
 * asked for two sweeps ago. */
static void check_sweep(const struct ksyms *ks)
{
	struct kstacks *t = kstacks__new();
	struct kstack stack = { { 0xffffffff81000010 } };
	uint64_t a = 1, b = 2, never = 3, h;
	size_t n;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "kstacks_sweep", sizeof(h),
			    sizeof(stack), 4, NULL);
	CHECK(fd >= 0);
	for (h = 1; h <= 3; h++)
		CHECK(bpf_map_update_elem(fd, &h, &stack, BPF_ANY) == 0);
	kstacks__frames(t, ks, fd, a, &n);
	CHECK(kstacks__sweep(t, fd, 4, false) == 0); /* 1 of 4 asked for */
	kstacks__frames(t, ks, fd, b, &n);
	/* 2 asked for, of 4: swept only because the programs found it full;
	 * a was asked for in the interval before: kept */
	CHECK(kstacks__sweep(t, fd, 4, true) == 1);
	CHECK(bpf_map_lookup_elem(fd, &never, &stack) != 0);
	CHECK(bpf_map_lookup_elem(fd, &a, &stack) == 0);
	kstacks__frames(t, ks, fd, b, &n);
	CHECK(kstacks__sweep(t, fd, 4, true) == 1); /* a: two sweeps ago */
	CHECK(bpf_map_lookup_elem(fd, &a, &stack) != 0);
	CHECK(bpf_map_lookup_elem(fd, &b, &stack) == 0);
	CHECK(kstacks__frames(t, ks, fd, a, &n) == NULL); /* forgotten */
	close(fd);
	kstacks__free(t);
}

int main(void)
{
	struct ksyms *ks = unit_ksyms(kallsyms);
	struct stack_cache *cache = stack_cache__new(16);
	const char *const *f;
	int fd, id;
	size_t n;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "kstack_test", sizeof(int),
			    DEPTH * sizeof(uint64_t), 16, NULL);
	if (fd == -EPERM) /* unprivileged BPF is off (Debian's default) */
		unit_skip("needs root (a BPF map)");
	if (fd < 0) {
		fprintf(stderr, "test_kstack: cannot make a BPF map (root?)\n");
		return 1;
	}
	put(fd, 1, 0xffffffff81000010, 0xffffffff81000120, 0, 0);
	put(fd, 2, 0xffffffff81000010, 0xffffffff81000120, 0xffffffff81000230,
	    0xffffffff81000011);
	put(fd, 3, 0, 0, 0, 0);

	f = kstack_frames(cache, ks, fd, 1, DEPTH, &n);
	CHECK(f && n == 2); /* truncated: the first zero ends it */
	if (f && n == 2) {
		CHECK_STR(f[0], "fn_a+0x10");
		CHECK_STR(f[1], "fn_b+0x20");
	}
	f = kstack_frames(cache, ks, fd, 2, DEPTH, &n);
	CHECK(f && n == DEPTH); /* full to the depth: no zero to stop at */
	if (f && n == DEPTH)
		CHECK_STR(f[3], "fn_a+0x11");
	f = kstack_frames(cache, ks, fd, 3, DEPTH, &n);
	CHECK(n == 0);
	f = kstack_frames(cache, ks, fd, 7, DEPTH, &n); /* not in the map */
	CHECK(!f && n == 0);
	f = kstack_frames(cache, ks, fd, -14, DEPTH, &n); /* -EFAULT from BPF */
	CHECK(!f && n == 0);
	/* Symbolized once: served from the cache after the map lost it. */
	id = 1;
	CHECK(bpf_map_delete_elem(fd, &id) == 0);
	f = kstack_frames(cache, ks, fd, 1, DEPTH, &n);
	CHECK(f && n == 2);
	stack_cache__clear(cache);
	f = kstack_frames(cache, ks, fd, 1, DEPTH, &n);
	CHECK(!f && n == 0);

	close(fd);
	stack_cache__free(cache);
	check_by_hash(ks);
	check_sweep(ks);
	ksyms__free(ks);
	return unit_done("kstack");
}
