// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The fields every record about a process starts with. */
#include "lib/record.h"
#include "provider/container.h"
#include "provider/provider.h"

void provider__record(struct record *r, uint32_t pid,
		      const struct proc_name *who)
{
	const struct container *c = who->container;

	record__process(r, pid, who->comm, who->service);
	/* Host processes carry none of these: the records stay as they
	 * were for hosts without containers. */
	if (!c)
		return;
	record__str(r, "container", c->id);
	if (c->pod[0]) {
		record__str(r, "pod", c->pod);
		record__str(r, "namespace", c->ns[0] ? c->ns : NULL);
	}
	if (c->pod_uid[0])
		record__str(r, "pod_uid", c->pod_uid);
}
