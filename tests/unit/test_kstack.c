// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kernel stacks from a map of stacks kept by hash (bpf/kstack.bpf.h), as
 * the kernel leaves them: cut short by zeros (a stack shallower than the
 * depth), full to the depth, empty, or gone (a hash the map does not
 * hold); symbolized once until forgotten, and swept once the map fills.
 * Needs root: it makes BPF maps standing in for the programs'. */
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

static const char kallsyms[] = "ffffffff81000000 T fn_a\n"
			       "ffffffff81000100 T fn_b\n"
			       "ffffffff81000200 T fn_c\n";

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

/* A stack as deep as the walk allows has no zero to end it; an empty
 * one has no frame. */
static void check_depths(const struct ksyms *ks)
{
	struct kstacks *t = kstacks__new();
	struct kstack stack = {};
	const char *const *f;
	uint64_t full = 1, empty = 2;
	size_t n;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "kstacks_depth", sizeof(full),
			    sizeof(stack), 4, NULL);
	CHECK(fd >= 0);
	for (int i = 0; i < KSTACK_DEPTH; i++)
		stack.ips[i] = 0xffffffff81000100 + i;
	CHECK(bpf_map_update_elem(fd, &full, &stack, BPF_ANY) == 0);
	memset(&stack, 0, sizeof(stack));
	CHECK(bpf_map_update_elem(fd, &empty, &stack, BPF_ANY) == 0);
	f = kstacks__frames(t, ks, fd, full, &n);
	CHECK(f && n == KSTACK_DEPTH);
	if (f && n == KSTACK_DEPTH)
		CHECK_STR(f[KSTACK_DEPTH - 1], "fn_b+0x7e");
	f = kstacks__frames(t, ks, fd, empty, &n);
	CHECK(n == 0);
	close(fd);
	kstacks__free(t);
}

int main(void)
{
	struct ksyms *ks = unit_ksyms(kallsyms);
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "kstack_test", sizeof(int),
				sizeof(int), 1, NULL);

	if (fd == -EPERM) /* unprivileged BPF is off (Debian's default) */
		unit_skip("needs root (a BPF map)");
	if (fd < 0) {
		fprintf(stderr, "test_kstack: cannot make a BPF map (root?)\n");
		return 1;
	}
	close(fd);
	check_by_hash(ks);
	check_depths(ks);
	check_sweep(ks);
	ksyms__free(ks);
	return unit_done("kstack");
}
