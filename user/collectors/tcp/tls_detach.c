// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Detaching uprobes off the main loop (see tls_detach.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "collectors/tcp/tls_detach.h"
#include "lib/xalloc.h"

struct tls_detach {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct tls_link *links; /* waiting */
	size_t n, cap;
	bool started, stop;
};

static void destroy(const struct tls_link *l)
{
	if (l->link)
		bpf_link__destroy(l->link);
	else
		close(l->fd);
}

static void *detach_loop(void *arg)
{
	struct tls_detach *d = arg;
	struct tls_link l;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->n && !d->stop)
			pthread_cond_wait(&d->more, &d->lock);
		if (!d->n)
			break;
		l = d->links[--d->n];
		pthread_mutex_unlock(&d->lock);
		destroy(&l);
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

struct tls_detach *tls_detach__new(void)
{
	struct tls_detach *d = xcalloc(1, sizeof(*d));

	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->more, NULL);
	return d;
}

/* The thread starts with the first links, in the main loop: after kmond
 * dropped its capabilities, which a thread takes from the one that makes
 * it (a thread made at start would keep them all). */
static bool start(struct tls_detach *d)
{
	if (!d->started && !pthread_create(&d->thread, NULL, detach_loop, d))
		d->started = true;
	return d->started;
}

void tls_detach__push(struct tls_detach *d, const struct tls_link *links, int n)
{
	if (!start(d)) {
		for (int i = 0; i < n; i++)
			destroy(&links[i]);
		return;
	}
	pthread_mutex_lock(&d->lock);
	if (d->n + n > d->cap) {
		d->cap = (d->n + n) * 2;
		d->links = xrealloc(d->links, d->cap * sizeof(*d->links));
	}
	for (int i = 0; i < n; i++)
		d->links[d->n++] = links[i];
	pthread_cond_signal(&d->more);
	pthread_mutex_unlock(&d->lock);
}

void tls_detach__free(struct tls_detach *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->more);
	pthread_mutex_unlock(&d->lock);
	if (d->started)
		pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->more);
	pthread_mutex_destroy(&d->lock);
	free(d->links);
	free(d);
}
