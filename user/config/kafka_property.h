/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef KMON_KAFKA_PROPERTY_H
#define KMON_KAFKA_PROPERTY_H

#include <stddef.h>

/* Checks one librdkafka producer property (name and value) the way the
 * sink will apply it. Returns 0, or -1 with librdkafka's reason in err. */
int kafka__check_property(const char *key, const char *value, char *err,
			  size_t errlen);

#endif
