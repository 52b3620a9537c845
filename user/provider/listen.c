// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include "lib/clock.h"
#include "lib/hashmap.h"
#include "lib/xalloc.h"
#include "provider/listen.h"

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

struct list {
	struct listener *l;
	size_t n, cap;
	uint32_t netns; /* of the listeners being added */
};

static void list_add(struct list *ls, uint16_t port, uint64_t inode)
{
	if (ls->n == ls->cap) {
		ls->cap = ls->cap ? ls->cap * 2 : 16;
		ls->l = xrealloc(ls->l, ls->cap * sizeof(*ls->l));
	}
	ls->l[ls->n++] = (struct listener){ port, inode, ls->netns };
}

static int read_file(const char *path, struct list *ls)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return errno == ENOENT ? 0 : -errno; /* no IPv6: fine */
	while (fgets(line, sizeof(line), f)) {
		struct listener l;

		if (listen__parse_line(line, &l) == 1)
			list_add(ls, l.port, l.inode);
	}
	fclose(f);
	return 0;
}

/* Asks sock_diag for the listeners of one family: the kernel filters by
 * state, so a host with a million connections costs no more than one
 * with ten (/proc/net/tcp walks them all). */
static int diag_family(int fd, int family, struct list *ls)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = { .nlmsg_len = sizeof(msg),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.req = { .sdiag_family = family,
			 .sdiag_protocol = IPPROTO_TCP,
			 .idiag_states = 1 << 10 /* TCP_LISTEN */ },
	};
	static char buf[32768];

	if (send(fd, &msg, sizeof(msg), 0) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		/* A signal (SIGHUP) mid-dump: the rest is still to come; a
		 * partial list would drop listening ports. */
		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0)
			return -errno;
		for (; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			struct inet_diag_msg *d = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EPROTO;
			list_add(ls, ntohs(d->id.idiag_sport), d->idiag_inode);
		}
	}
}

static int read_diag(struct list *ls)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			NETLINK_SOCK_DIAG);
	int err;

	if (fd < 0)
		return -errno;
	err = diag_family(fd, AF_INET, ls);
	err = err ?: diag_family(fd, AF_INET6, ls);
	close(fd);
	return err;
}

/* The other network namespaces (containers): /proc/PID/net/tcp{,6} of
 * the first process found in each. A process that exits meanwhile just
 * leaves its namespace to the next one in it. */
static void read_other_netns(struct list *ls, uint32_t own)
{
	struct hashmap *seen = hashmap__new();
	DIR *proc = opendir("/proc");
	char path[64], path6[64];
	struct dirent *de;
	struct stat st;

	while (seen && proc && (de = readdir(proc))) {
		unsigned long pid = strtoul(de->d_name, NULL, 10);
		size_t n = ls->n;

		snprintf(path, sizeof(path), "/proc/%lu/ns/net", pid);
		if (!pid || stat(path, &st) || (uint32_t)st.st_ino == own ||
		    hashmap__find(seen, st.st_ino))
			continue;
		ls->netns = (uint32_t)st.st_ino;
		snprintf(path, sizeof(path), "/proc/%lu/net/tcp", pid);
		snprintf(path6, sizeof(path6), "/proc/%lu/net/tcp6", pid);
		if (read_file(path, ls) || read_file(path6, ls)) {
			ls->n = n; /* gone: another process may tell */
			continue;
		}
		hashmap__set(seen, st.st_ino, 1);
	}
	if (proc)
		closedir(proc);
	hashmap__free(seen);
}

int listen__read(struct listener **out)
{
	struct list ls = { .netns = listen__netns() };
	int err;

	err = read_diag(&ls);
	if (err) { /* no sock_diag (module not loaded): the slow way */
		ls.n = 0;
		err = read_file("/proc/net/tcp", &ls);
		err = err ?: read_file("/proc/net/tcp6", &ls);
	}
	if (!err)
		read_other_netns(&ls, ls.netns);
	*out = ls.l;
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	return (int)ls.n;
}

uint32_t listen__netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (uint32_t)st.st_ino;
}

int listen_cache__get(struct listen_cache *lc, const struct listener **out,
		      uint64_t *version)
{
	uint64_t seen = lc->changes ? *lc->changes : 0, now = mono_ns();
	bool changed = !lc->valid || seen != lc->seen;
	struct listener *ls;
	int n;

	if (lc->changes && !changed && !(lc->settle && now >= lc->settle_ns))
		goto out;
	/* The count was taken before the read: a listener it counts later
	 * is read at the next call. */
	n = listen__read(&ls);
	if (n < 0) {
		lc->valid = false;
		return n;
	}
	free(lc->ls);
	lc->ls = ls;
	lc->n = n;
	lc->version++;
	lc->valid = true;
	lc->seen = seen;
	lc->settle = changed;
	lc->settle_ns = now + LISTEN_SETTLE_NS;
out:
	*out = lc->ls;
	*version = lc->version;
	return lc->n;
}

void listen_cache__count(struct listen_cache *lc,
			 const volatile uint64_t *changes)
{
	lc->changes = changes;
	lc->valid = false;
}

void listen_cache__free(struct listen_cache *lc)
{
	free(lc->ls);
	memset(lc, 0, sizeof(*lc));
}

void listen__socket_holders(void (*found)(void *ctx, uint64_t inode,
					  uint32_t pid),
			    void *ctx)
{
	DIR *proc = opendir("/proc"), *fds;
	struct dirent *de, *fe;
	char path[300], link[64];

	if (!proc)
		return;
	while ((de = readdir(proc))) {
		unsigned long pid = strtoul(de->d_name, NULL, 10);

		if (!pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%lu/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((fe = readdir(fds))) {
			unsigned long long inode;
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%lu/fd/%s", pid,
				 fe->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (sscanf(link, "socket:[%llu]", &inode) == 1)
				found(ctx, inode, pid);
		}
		closedir(fds);
	}
	closedir(proc);
}
