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
struct tls_attach;

/* The programs, by the function each goes on. */
struct tls_progs {
	struct bpf_program *write, *write_ex, *read, *read_ex, *handshake;
	struct bpf_program *exit; /* the return of each of them */
};

/* procs: the kernel's count of processes attached (tls_procs). */
struct tls_attach *tls_attach__new(const struct tls_progs *progs,
				   volatile uint32_t *procs);
void tls_attach__free(struct tls_attach *t); /* NULL-safe */
/* pid joined a service (at its exec, or as selectors are applied):
 * attached to the libssl.so.3 it maps, or, just after its exec, to the
 * one its dynamic linker will find. */
void tls_attach__pid(struct tls_attach *t, uint32_t pid);
/* Each interval: processes selected since and not yet looked at are
 * attached; exited ones detached. */
void tls_attach__sync(struct tls_attach *t, struct provider *p);
/* Processes attached now; attaches that failed since start. */
uint64_t tls_attach__procs(const struct tls_attach *t);
uint64_t tls_attach__failures(const struct tls_attach *t);

#endif
