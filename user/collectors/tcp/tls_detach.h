/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Detaching uprobes off the main loop (tls_attach.c). Closing a uprobe's
 * perf event waits for the kernel's grace periods (uprobe_unregister's
 * synchronize_srcu): measured here, the 10 perf links of one process
 * held kmond's main loop 1.1 s (its 6 uprobe_multi links 80 ms), during which the exec events of the next
 * processes waited, and those were gone before they could be attached.
 * A thread of its own destroys them. */
#ifndef KMON_TLS_DETACH_H
#define KMON_TLS_DETACH_H

struct bpf_link;
struct tls_detach;

/* A uprobe's link: libbpf's (a perf event), or else a uprobe_multi
 * link's fd (uprobe_multi.h). */
struct tls_link {
	struct bpf_link *link;
	int fd;
};

/* The thread starts at the first push; where it cannot, links are
 * destroyed at once. */
struct tls_detach *tls_detach__new(void);
/* Takes the n links (destroyed later, in order). */
void tls_detach__push(struct tls_detach *d, const struct tls_link *links,
		      int n);
/* Destroys what is left, then stops the thread. NULL-safe. */
void tls_detach__free(struct tls_detach *d);

#endif
