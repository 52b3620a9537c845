// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collectors/tcp/tcp_flush.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "bpf/tcp/tls.h" /* the skeleton's tls_call_zero */
#include "tcp.skel.h"

bool tcp_flush__select(struct tcp_bpf *skel, const struct hook *hook,
		       int *chosen, bool all_btf)
{
	struct bpf_program *sockets = skel->progs.tcp_flush_sockets;
	struct bpf_program *conns = skel->progs.tcp_flush_conns;

	/* hooks that hand over plain addresses keep states in the hash,
	 * where the iterator on sockets finds none */
	if (*chosen >= 0 && hook->cands[*chosen].kind == ATTACH_ITER &&
	    !all_btf) {
		probe__refuse(&hook->cands[*chosen],
			      "the state is in the hash (not every tcp hook "
			      "is on tp_btf)");
		*chosen = probe__choose(hook);
		bpf_program__set_autoload(sockets, false);
		bpf_program__set_autoload(conns, *chosen >= 0);
		if (*chosen >= 0)
			probe__fail_load_if_asked(conns, &hook->cands[*chosen]);
	}
	/* attached here, on the map, or run: not by the skeleton */
	bpf_program__set_autoattach(sockets, false);
	bpf_program__set_autoattach(conns, false);
	if (*chosen >= 0)
		log_debug("tcp: quiet connections flushed by %s",
			  attach_kind_name(hook->cands[*chosen].kind));
	return all_btf &&
	       (*chosen < 0 || hook->cands[*chosen].kind == ATTACH_ITER);
}

int tcp_flush__attach(struct tcp_bpf *skel, struct bpf_link **link)
{
	struct bpf_program *prog = skel->progs.tcp_flush_sockets;
	union bpf_iter_link_info info = { .map.map_fd = bpf_map__fd(
						  skel->maps.sock_conns) };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info,
		    .link_info_len = sizeof(info));
	int err;

	*link = NULL;
	if (!bpf_program__autoload(prog))
		return 0;
	*link = bpf_program__attach_iter(prog, &opts);
	if (*link)
		return 0;
	err = -errno;
	probe__note_failure(bpf_program__name(prog), err);
	log_debug("tcp: cannot attach the flush iterator: %s", strerror(-err));
	return err;
}

static void run_iterator(struct bpf_link *link)
{
	char buf[64];
	int fd = bpf_iter_create(bpf_link__fd(link));

	if (fd < 0) {
		log_debug("tcp: quiet connections not swept: %s",
			  strerror(errno));
		return;
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		; /* it writes nothing: reading runs it */
	close(fd);
}

void tcp_flush__run(struct bpf_link *link, struct tcp_bpf *skel,
		    uint64_t quiet_ns)
{
	struct bpf_program *conns = skel->progs.tcp_flush_conns;
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	uint64_t now_ns = mono_ns();

	skel->bss->flush_before_ns = now_ns > quiet_ns ? now_ns - quiet_ns : 0;
	if (link)
		run_iterator(link);
	else if (bpf_program__autoload(conns) &&
		 bpf_prog_test_run_opts(bpf_program__fd(conns), &opts))
		log_debug("tcp: quiet connections not swept: %s",
			  strerror(errno));
}
