/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reload when the config file changes on disk: a Kubernetes ConfigMap
 * mounted as a volume is updated by swapping a symlink (..data) in its
 * directory, an editor writes in place or renames over it, so the
 * directory is watched (inotify) and the file's content compared. SIGHUP
 * still works as before. */
#ifndef KMON_CONFIG_WATCH_H
#define KMON_CONFIG_WATCH_H

#include <stdbool.h>

struct config_watch;

/* NULL (and a warning) when the directory cannot be watched. */
struct config_watch *config_watch__new(const char *path);
/* Never blocks: whether the content differs from the last time it said
 * so (or from start-up). NULL-safe. */
bool config_watch__changed(struct config_watch *w);
void config_watch__free(struct config_watch *w); /* NULL-safe */

#endif
