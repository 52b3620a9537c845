// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "listen.h"

#define TCP_LISTEN_STATE 0x0A

int listen__parse_line(const char *line, struct listener *l)
{
	char local[64], remote[64];
	unsigned int state, port;
	uint64_t inode;
	const char *colon;

	/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
	if (sscanf(line, " %*u: %63s %63s %x %*s %*s %*s %*u %*u %" SCNu64,
		   local, remote, &state, &inode) != 4)
		return -1;
	colon = strrchr(local, ':');
	if (!colon || sscanf(colon + 1, "%x", &port) != 1 || port > 65535)
		return -1;
	if (state != TCP_LISTEN_STATE)
		return 0;
	l->port = (uint16_t)port;
	l->inode = inode;
	return 1;
}

static int read_file(const char *path, struct listener **out, size_t *n,
		     size_t *cap)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return errno == ENOENT ? 0 : -errno; /* no IPv6: fine */
	while (fgets(line, sizeof(line), f)) {
		struct listener l;

		if (listen__parse_line(line, &l) != 1)
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			*out = realloc(*out, *cap * sizeof(**out));
			if (!*out)
				abort();
		}
		(*out)[(*n)++] = l;
	}
	fclose(f);
	return 0;
}

int listen__read(struct listener **out)
{
	size_t n = 0, cap = 0;
	int err;

	*out = NULL;
	err = read_file("/proc/net/tcp", out, &n, &cap);
	err = err ?: read_file("/proc/net/tcp6", out, &n, &cap);
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	return (int)n;
}

uint32_t listen__netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (uint32_t)st.st_ino;
}
