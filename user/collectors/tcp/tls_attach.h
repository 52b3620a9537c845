/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The uprobes of TLS in plaintext (bpf/tcp/tls.bpf.h), attached per
 * monitored process to the OpenSSL 3 it maps (libssl.so.3): a process
 * kmond does not monitor gets no breakpoint, and pays nothing. */
#ifndef KMON_TLS_ATTACH_H
#define KMON_TLS_ATTACH_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_program;
struct provider;
struct proc_lifecycle;
struct tls_attach;

/* The programs, by the function each goes on. */
struct tls_progs {
	struct bpf_program *write, *write_ex, *read, *read_ex, *handshake;
	struct bpf_program *exit; /* the return of each of them */
	bool multi; /* loaded for uprobe_multi links, not perf events */
};

/* procs: the kernel's count of processes attached (tls_procs). */
struct tls_attach *tls_attach__new(const struct tls_progs *progs,
				   volatile uint32_t *procs);
void tls_attach__free(struct tls_attach *t); /* NULL-safe */
/* pid joined a service (as selectors are applied): attached to the file
 * of its SSL functions (tls_target.h), if any. */
void tls_attach__pid(struct tls_attach *t, uint32_t pid);
/* A process in a service started a program, was forked or exited: the
 * uprobes follow it, right away. */
void tls_attach__change(struct tls_attach *t,
			const struct proc_lifecycle *change);
/* Each interval: processes selected since and not yet looked at are
 * attached, some not attached looked at again; those that exited or
 * left their service detached. */
void tls_attach__sync(struct tls_attach *t, struct provider *p);

struct tls_attach_stats {
	uint64_t procs; /* attached now */
	uint64_t failures; /* attaches that failed, since start */
	/* attached as they started (exec, fork), since start; of those,
	 * the longest from the start to the uprobes in place since the
	 * last call: the SSL calls a process makes before are not read */
	uint64_t at_start;
	uint64_t delay_max_ns;
	/* gone before they could be read or attached, since start: their
	 * TLS connections, if any, read `tls` */
	uint64_t gone_first;
};

/* Its figures; the longest delay starts again. */
void tls_attach__stats(struct tls_attach *t, struct tls_attach_stats *st);

#endif
