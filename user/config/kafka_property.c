// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kafka properties are checked while the config is read, so a bad one is
 * refused with its file:line:col before any sink opens. */
#include <stdio.h>

#include <librdkafka/rdkafka.h>

#include "config/kafka_property.h"

int kafka__check_property(const char *key, const char *value, char *err,
			  size_t errlen)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char errstr[512];
	int ret = 0;

	if (rd_kafka_conf_set(conf, key, value, errstr, sizeof(errstr)) !=
	    RD_KAFKA_CONF_OK) {
		snprintf(err, errlen, "%s", errstr);
		ret = -1;
	}
	rd_kafka_conf_destroy(conf);
	return ret;
}
