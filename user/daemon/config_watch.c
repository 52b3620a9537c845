// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "daemon/config_watch.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/xalloc.h"

struct config_watch {
	int fd; /* inotify */
	char *path;
	uint64_t hash; /* of the content last seen; 0: unreadable */
};

/* The content's hash, following symlinks as a reader does. */
static uint64_t content_hash(const char *path)
{
	char buf[8192];
	uint64_t h = FNV1A_SEED;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		h = fnv1a_more(h, buf, n);
	close(fd);
	return n < 0 ? 0 : h | 1;
}

struct config_watch *config_watch__new(const char *path)
{
	struct config_watch *w;
	char *copy = xstrdup(path);
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd < 0 ||
	    inotify_add_watch(fd, dirname(copy),
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE |
				      IN_DELETE | IN_ATTRIB) < 0) {
		log_warn("cannot watch %s for changes (SIGHUP reloads): %s",
			 path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(copy);
		return NULL;
	}
	free(copy);
	w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->path = xstrdup(path);
	w->hash = content_hash(path);
	return w;
}

bool config_watch__changed(struct config_watch *w)
{
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	bool any = false;
	uint64_t h;

	if (!w)
		return false;
	while (read(w->fd, buf, sizeof(buf)) > 0)
		any = true;
	if (!any)
		return false;
	/* Events in the directory that leave the content as it was (other
	 * files, a touch, the old ConfigMap data removed) change nothing; a
	 * file being replaced reads as missing for a moment: wait for it. */
	h = content_hash(w->path);
	if (!h || h == w->hash)
		return false;
	w->hash = h;
	return true;
}

void config_watch__free(struct config_watch *w)
{
	if (!w)
		return;
	close(w->fd);
	free(w->path);
	free(w);
}
