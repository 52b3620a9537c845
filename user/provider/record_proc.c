// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The fields every record about a process starts with. */
#include <stdbool.h>
#include <string.h>

#include "config/config.h"
#include "lib/record.h"
#include "provider/container.h"
#include "provider/provider.h"

/* The pid, comm and service of the processes recorded last, as the JSON
 * they were encoded to: records come in runs about a few processes (a tcp
 * record per request), and these fields were a sixth of a tcp record's
 * encoding. A slot is used again only when its comm and service have the
 * same text (where the names are kept may move); host processes only: a
 * container's fields can fill in later (pod names). */
#define PREFIX_SLOTS 64
#define PREFIX_MAX RECORD_ENCODED_MAX

struct prefix {
	uint32_t pid;
	bool used;
	bool comma; /* encoded after another field */
	bool has_service;
	uint8_t len;
	char comm[16 + 1]; /* TASK_COMM_LEN */
	char service[CONFIG_NAME_MAX];
	char key[RECORD_KEY_MAX];
	char json[PREFIX_MAX];
};

static struct prefix prefixes[PREFIX_SLOTS];

static bool same_text(const char *cached, size_t cap, const char *s)
{
	size_t n = strlen(s);

	return n < cap && memcmp(cached, s, n + 1) == 0;
}

static struct prefix *prefix_of(const struct record *r, uint32_t pid,
				const struct proc_name *who)
{
	struct prefix *p = &prefixes[(pid * 2654435761u) >> 26];

	if (!p->used || p->pid != pid || p->comma != r->need_comma ||
	    p->has_service != (who->service != NULL) ||
	    !same_text(p->comm, sizeof(p->comm), who->comm) ||
	    (who->service &&
	     !same_text(p->service, sizeof(p->service), who->service)))
		return NULL;
	return p;
}

/* Keeps what record__process() just wrote from offset start. */
static void prefix_keep(const struct record *r, size_t start, bool comma,
			uint32_t pid, const struct proc_name *who)
{
	struct prefix *p = &prefixes[(pid * 2654435761u) >> 26];
	size_t len = r->json.len - start;

	if (len > PREFIX_MAX || strlen(who->comm) >= sizeof(p->comm) ||
	    (who->service && strlen(who->service) >= sizeof(p->service))) {
		p->used = false;
		return;
	}
	p->used = true;
	p->pid = pid;
	p->comma = comma;
	p->has_service = who->service != NULL;
	strcpy(p->comm, who->comm);
	if (who->service)
		strcpy(p->service, who->service);
	memcpy(p->key, r->key, sizeof(p->key));
	p->len = (uint8_t)len;
	memcpy(p->json, r->json.buf + start, len);
}

static void record_process(struct record *r, uint32_t pid,
			   const struct proc_name *who)
{
	const struct prefix *p = prefix_of(r, pid, who);
	size_t start = r->json.len;
	bool comma = r->need_comma;

	if (p) {
		record__encoded(r, p->json, p->len);
		memcpy(r->key, p->key, sizeof(r->key));
		return;
	}
	record__process(r, pid, who->comm, who->service);
	prefix_keep(r, start, comma, pid, who);
}

void provider__record(struct record *r, uint32_t pid,
		      const struct proc_name *who)
{
	const struct container *c = who->container;

	/* Host processes carry none of these: the records stay as they
	 * were for hosts without containers. */
	if (!c) {
		record_process(r, pid, who);
		return;
	}
	record__process(r, pid, who->comm, who->service);
	record__str(r, "container", c->id);
	if (c->pod[0]) {
		record__str(r, "pod", c->pod);
		record__str(r, "namespace", c->ns[0] ? c->ns : NULL);
	}
	if (c->pod_uid[0])
		record__str(r, "pod_uid", c->pod_uid);
}
