// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/bio.h"
#include "collectors/bio_lost.h"
#include "bio_lost.skel.h"
#include "lib/log.h"

struct bio_lost {
	struct bio_lost_bpf *skel;
	struct bpf_link *link;
	uint64_t found;
};

void bio_lost__free(struct bio_lost *l)
{
	if (!l)
		return;
	bpf_link__destroy(l->link);
	bio_lost_bpf__destroy(l->skel);
	free(l);
}

struct bio_lost *bio_lost__new(int inflight_fd)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = { .map.map_fd = inflight_fd };
	struct bio_lost *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return NULL;
	l->skel = bio_lost_bpf__open();
	err = l->skel ? 0 : -errno;
	err = err ?: bpf_map__reuse_fd(l->skel->maps.bio_inflight, inflight_fd);
	err = err ?: bio_lost_bpf__load(l->skel);
	if (!err) {
		opts.link_info = &info;
		opts.link_info_len = sizeof(info);
		l->link = bpf_program__attach_iter(l->skel->progs.bio_find_lost,
						   &opts);
		err = l->link ? 0 : -errno;
	}
	if (err) {
		log_warn("bio: I/Os whose completion is missed will not be "
			 "counted as lost: %s", strerror(-err));
		bio_lost__free(l);
		return NULL;
	}
	return l;
}

uint64_t bio_lost__sweep(struct bio_lost *l)
{
	struct bio_rq_key keys[64];
	ssize_t n;
	int fd;

	if (!l)
		return 0;
	fd = bpf_iter_create(bpf_link__fd(l->link));
	if (fd < 0)
		return l->found;
	/* The iterator has deleted what it writes out. */
	while ((n = read(fd, keys, sizeof(keys))) > 0)
		l->found += (size_t)n / sizeof(keys[0]);
	close(fd);
	return l->found;
}
