// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "collectors/tcp_flush.h"
#include "lib/log.h"
#include "tcp.skel.h"

/* An iterator target exists when the kernel's BTF has its function. */
static bool have_iter(const char *target)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	char name[64];
	bool have;

	if (!vmlinux)
		return false;
	snprintf(name, sizeof(name), "bpf_iter_%s", target);
	have = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return have;
}

void tcp_flush__select(struct tcp_bpf *skel)
{
	bool in_socket = skel->rodata->conn_in_socket;

	bpf_program__set_autoload(skel->progs.tcp_flush_sockets,
				  in_socket && have_iter("bpf_sk_storage_map"));
	bpf_program__set_autoload(skel->progs.tcp_flush_conns,
				  !in_socket && have_iter("bpf_map_elem"));
	/* attached here, on the map: not by the skeleton */
	bpf_program__set_autoattach(skel->progs.tcp_flush_sockets, false);
	bpf_program__set_autoattach(skel->progs.tcp_flush_conns, false);
}

struct bpf_link *tcp_flush__attach(struct tcp_bpf *skel)
{
	bool in_socket = skel->rodata->conn_in_socket;
	struct bpf_program *prog = in_socket ? skel->progs.tcp_flush_sockets :
					       skel->progs.tcp_flush_conns;
	struct bpf_map *map = in_socket ? skel->maps.sock_conns :
					  skel->maps.conns;
	union bpf_iter_link_info info = { .map.map_fd = bpf_map__fd(map) };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info,
		    .link_info_len = sizeof(info));
	struct bpf_link *link = NULL;

	if (bpf_program__autoload(prog))
		link = bpf_program__attach_iter(prog, &opts);
	if (!link)
		log_warn("tcp: the last request of a connection kept open "
			 "waits for its next request or its close (no map "
			 "iterator: %s)",
			 bpf_program__autoload(prog) ? strerror(errno) :
						       "not in this kernel");
	return link;
}

void tcp_flush__run(struct bpf_link *link, struct tcp_bpf *skel,
		    uint64_t quiet_ns)
{
	struct timespec now;
	uint64_t now_ns;
	char buf[64];
	int fd;

	if (!link)
		return;
	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC */
	clock_gettime(CLOCK_MONOTONIC, &now);
	now_ns = (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec;
	skel->bss->flush_before_ns = now_ns > quiet_ns ? now_ns - quiet_ns : 0;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		log_debug("tcp: quiet connections not swept: %s",
			  strerror(errno));
		return;
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		; /* it writes nothing: reading runs it */
	close(fd);
}
