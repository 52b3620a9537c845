// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/bio.h"
#include "collectors/bio_lost.h"
#include "bio_lost.skel.h"
#include "lib/log.h"

struct bio_lost {
	struct bio_lost_bpf *skel;
};

void bio_lost__free(struct bio_lost *l)
{
	if (!l)
		return;
	bio_lost_bpf__destroy(l->skel);
	free(l);
}

struct bio_lost *bio_lost__new(const struct hook *hook, int inflight_fd)
{
	struct bio_lost *l = calloc(1, sizeof(*l));
	int chosen, err;

	if (!l)
		return NULL;
	l->skel = bio_lost_bpf__open();
	err = l->skel ? 0 : -errno;
	err = err ?: probe__select("bio", l->skel->obj, hook, 1, &chosen);
	err = err ?: chosen < 0 ? -ENOTSUP : 0;
	err = err ?: bpf_map__reuse_fd(l->skel->maps.bio_inflight, inflight_fd);
	err = err ?: bio_lost_bpf__load(l->skel);
	/* Refused at load: off for the rest of the run, said once (as
	 * probe__select said it when the program was never chosen). */
	if (err && err != -ENOTSUP)
		probe__refuse_failed("bio", hook, 1);
	if (err) {
		bio_lost__free(l);
		return NULL;
	}
	return l;
}

uint64_t bio_lost__sweep(struct bio_lost *l)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (!l)
		return 0;
	if (bpf_prog_test_run_opts(
		    bpf_program__fd(l->skel->progs.bio_find_lost), &opts))
		log_debug("bio: lost I/O not looked for: %s", strerror(errno));
	return l->skel->bss->found;
}
