// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/types.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/drop.h"
#include "collectors/drop_owners.h"
#include "drop_owners.skel.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "provider/listen.h"
#include "provider/provider.h"

/* Every open file once, through the iterator: returns 0 or -errno (a
 * refused program noted for probe__refuse_failed). */
static int seed_by_iterator(const struct hook *hook, int sock_owner_fd,
			    int port_owner_fd)
{
	struct drop_owners_bpf *skel = drop_owners_bpf__open();
	struct bpf_link *link = NULL;
	int err, fd = -1, chosen;
	char buf[64];

	if (!skel)
		return -errno;
	err = probe__select("drop", skel->obj, hook, 1, &chosen);
	err = err ?: chosen < 0 ? -ENOTSUP : 0;
	err = err ?: bpf_map__reuse_fd(skel->maps.sock_owner, sock_owner_fd);
	err = err ?: bpf_map__reuse_fd(skel->maps.port_owner, port_owner_fd);
	err = err ?: drop_owners_bpf__load(skel);
	if (err)
		goto cleanup;
	link = bpf_program__attach_iter(skel->progs.drop_seed_owners, NULL);
	if (!link) {
		err = -errno;
		probe__note_failure("drop_seed_owners", err);
		goto cleanup;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* The program prints nothing: reading to the end runs it. */
	while ((err = read(fd, buf, sizeof(buf))) > 0)
		;
	err = err < 0 ? -errno : 0;
cleanup:
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	drop_owners_bpf__destroy(skel);
	return err;
}

struct listener_seed {
	const struct listener *ls;
	struct hashmap *index; /* socket inode -> its index in ls */
	int port_owner_fd;
	int seeded;
};

static void seed_listener(void *ctx, uint64_t inode, uint32_t pid)
{
	struct listener_seed *s = ctx;
	uint64_t *i = hashmap__find(s->index, inode);
	struct drop_port_key key = { 0 };

	if (!i)
		return;
	key.netns = s->ls[*i].netns;
	key.port = s->ls[*i].port;
	/* /proc lists pids in order: a listener shared across fork goes
	 * to the lowest, as the iterator gives it */
	if (!bpf_map_update_elem(s->port_owner_fd, &key, &pid, BPF_NOEXIST))
		s->seeded++;
}

/* The listeners' owners, from the listen list and /proc. */
static void seed_listeners(int port_owner_fd, struct provider *p)
{
	struct listener_seed s = { .port_owner_fd = port_owner_fd };
	uint64_t version;
	int n = provider__listeners(p, &s.ls, &version);

	if (n <= 0)
		return;
	s.index = hashmap__new();
	for (int i = 0; i < n; i++)
		hashmap__set(s.index, s.ls[i].inode, i);
	listen__socket_holders(seed_listener, &s);
	hashmap__free(s.index);
	log_debug("drop: owners of %d listeners from /proc", s.seeded);
}

void drop_owners__seed(const struct hook *hook, int sock_owner_fd,
		       int port_owner_fd, struct provider *p)
{
	int err = seed_by_iterator(hook, sock_owner_fd, port_owner_fd);

	if (!err)
		return;
	/* Refused: off for the rest of the run, said once by
	 * probe__refuse_failed (by probe__select when never chosen); any
	 * other failure is said here. */
	if (err != -ENOTSUP && !probe__refuse_failed("drop", hook, 1))
		log_warn("drop: cannot list the sockets that predate kmond "
			 "(%s): only listeners' owners are known",
			 strerror(-err));
	seed_listeners(port_owner_fd, p);
}
