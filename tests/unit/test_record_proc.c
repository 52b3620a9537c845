// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The fields a record about a process starts with come out the same
 * whether encoded afresh or taken from the last records' (the prefix
 * cache of provider__record): a new comm, service or pid, a service name
 * rewritten in place and pids sharing a slot each get their own text. */
#include <stdio.h>
#include <string.h>

#include "lib/record.h"
#include "provider/provider.h"
#include "unit.h"

/* The record provider__record makes, and what record__process alone
 * makes (never cached), compared. */
static int differs(uint32_t pid, const char *comm, const char *service)
{
	struct proc_name who = { .comm = comm, .service = service };
	struct record a, b;
	int bad;

	record__init(&a);
	record__init(&b);
	record__begin(&a, "tcp", 1, "n");
	provider__record(&a, pid, &who);
	record__u64(&a, "after", 7);
	record__end(&a);
	record__begin(&b, "tcp", 1, "n");
	record__process(&b, pid, comm, service);
	record__u64(&b, "after", 7);
	record__end(&b);
	bad = strcmp(a.json.buf, b.json.buf) != 0 || strcmp(a.key, b.key) != 0;
	if (bad)
		fprintf(stderr, "got  %s (key %s)\nwant %s (key %s)\n",
			a.json.buf, a.key, b.json.buf, b.key);
	record__free(&a);
	record__free(&b);
	return bad;
}

int main(void)
{
	char service[16] = "web";
	int bad = 0;

	bad += differs(100, "nginx", service);
	bad += differs(100, "nginx", service); /* from the cache */
	bad += differs(100, "nginx-new", service);
	bad += differs(100, "nginx-new", NULL);
	bad += differs(100, "nginx-new", service);
	strcpy(service, "api"); /* the same storage, another name */
	bad += differs(100, "nginx-new", service);
	bad += differs(100, "a\"b", service); /* escaped */
	/* pids of one slot and of others, in turn */
	for (uint32_t i = 0; i < 200; i++)
		bad += differs(100 + (i % 7) * 64 + i % 3, i % 2 ? "x" : "y",
			       i % 5 ? service : NULL);
	/* a comm or service too long to keep: still right */
	bad += differs(100, "fifteen-chars-x", service);
	CHECK(bad == 0);
	return unit_done("record_proc");
}
