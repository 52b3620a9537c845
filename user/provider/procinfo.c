// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE /* strchrnul */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/procinfo.h"
#include "lib/array.h"

#define CONTAINER_ID_LEN 64

int procinfo__exe(uint32_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int procinfo__cgroups(uint32_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int procinfo__parse_ppid(const char *stat_line, uint32_t *ppid)
{
	/* comm ends at the last ')': it may contain ')' itself. */
	const char *close = strrchr(stat_line, ')');
	unsigned long v;
	char state, *end;

	if (!close || close[1] != ' ' || !close[2] || close[3] != ' ')
		return -1;
	state = close[2];
	if (!isalpha((unsigned char)state))
		return -1;
	errno = 0;
	v = strtoul(close + 4, &end, 10);
	if (errno || end == close + 4 ||
	    (*end != ' ' && *end != '\0' && *end != '\n') || v > UINT32_MAX)
		return -1;
	*ppid = (uint32_t)v;
	return 0;
}

void procinfo__parse_comm(const char *text, char comm[16])
{
	size_t n = strcspn(text, "\n");

	if (n > 15)
		n = 15;
	memcpy(comm, text, n);
	comm[n] = '\0';
}

/* Calls fn on the path of each "id:controllers:path" line; stops at the
 * first true. */
static bool any_cgroup_path(const char *text,
			    bool (*fn)(const char *path, size_t len,
				       const void *arg),
			    const void *arg)
{
	const char *line = text;

	while (*line) {
		const char *end = strchrnul(line, '\n');
		const char *c1 = memchr(line, ':', end - line);
		const char *c2 = c1 ? memchr(c1 + 1, ':', end - c1 - 1) : NULL;

		if (c2 && fn(c2 + 1, end - c2 - 1, arg))
			return true;
		line = *end ? end + 1 : end;
	}
	return false;
}

static bool path_under(const char *path, size_t len, const void *arg)
{
	const char *prefix = arg;
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--; /* "/a/" means "/a" */
	if (n == 1 && prefix[0] == '/')
		return true;
	return len >= n && memcmp(path, prefix, n) == 0 &&
	       (len == n || path[n] == '/');
}

bool cgroups_under(const char *text, const char *prefix)
{
	return any_cgroup_path(text, path_under, prefix);
}

bool cgroup_path_under(const char *path, const char *prefix)
{
	return path_under(path, strlen(path), prefix);
}

bool procinfo__parse_cgroup2(const char *text, char *path, size_t len)
{
	const char *line = text;

	while (*line) {
		const char *end = strchrnul(line, '\n');
		size_t n = end - line - 3;

		if (end - line > 3 && !memcmp(line, "0::", 3) && n < len) {
			memcpy(path, line + 3, n);
			path[n] = '\0';
			return true;
		}
		line = *end ? end + 1 : end;
	}
	return false;
}

static size_t hex_run(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && isxdigit((unsigned char)s[n]) &&
	       !isupper((unsigned char)s[n]))
		n++;
	return n;
}

/* One path component: "docker-ID.scope" and friends, or a bare ID. */
static bool component_id(const char *c, size_t len, char *id, size_t idlen)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-",
						"crio-", "libpod-", "" };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		size_t plen = strlen(prefixes[i]);
		const char *rest = c + plen;
		size_t restlen = len - plen;

		if (len < plen || memcmp(c, prefixes[i], plen) != 0)
			continue;
		/* systemd scopes end in .scope; cgroupfs managers (podman's
		 * /libpod_parent/libpod-ID, CRI-O's crio-ID) use the bare name */
		if (restlen >= 6 &&
		    memcmp(rest + restlen - 6, ".scope", 6) == 0)
			restlen -= 6;
		if (restlen != CONTAINER_ID_LEN ||
		    hex_run(rest, restlen) != CONTAINER_ID_LEN)
			continue;
		if (idlen <= CONTAINER_ID_LEN)
			return false;
		memcpy(id, rest, CONTAINER_ID_LEN);
		id[CONTAINER_ID_LEN] = '\0';
		return true;
	}
	return false;
}

static bool path_container_id(const char *path, size_t len, char *id,
			      size_t idlen)
{
	/* The innermost component naming a container wins. */
	size_t end = len;

	while (end > 0) {
		size_t start = end;

		while (start > 0 && path[start - 1] != '/')
			start--;
		if (component_id(path + start, end - start, id, idlen))
			return true;
		end = start ? start - 1 : 0;
	}
	return false;
}

bool cgroup_container_id(const char *path, char *id, size_t len)
{
	return path_container_id(path, strlen(path), id, len);
}

static bool path_in_container(const char *path, size_t len, const void *arg)
{
	char id[CONTAINER_ID_LEN + 1];
	const char *prefix = arg;

	return path_container_id(path, len, id, sizeof(id)) &&
	       strncmp(id, prefix, strlen(prefix)) == 0;
}

bool cgroups_in_container(const char *text, const char *id_prefix)
{
	return any_cgroup_path(text, path_in_container, id_prefix);
}
