// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stddef.h>

#include "collectors/collector.h"

extern const struct collector_ops syscall_collector;
extern const struct collector_ops drop_collector;
extern const struct collector_ops counters_collector;
extern const struct collector_ops offcpu_collector;
extern const struct collector_ops bio_collector;
extern const struct collector_ops tcp_collector;

/* Every collector kmond has: adding one is one line here. */
const struct collector_ops *const collectors[] = {
	&syscall_collector,
	&drop_collector,
	&counters_collector,
	&offcpu_collector,
	&bio_collector,
	&tcp_collector,
	NULL,
};
