/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* OTLP/HTTP with JSON: ExportTraceServiceRequest bodies POSTed to a
 * collector's /v1/traces (libcurl; http and https). */
#ifndef KMON_TRACE_HTTP_H
#define KMON_TRACE_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct otlp_http_counts {
	uint64_t posts; /* answered 2xx */
	uint64_t failed; /* not delivered, after the retry */
	uint64_t spans_failed; /* in the requests not delivered */
	uint64_t spans_rejected; /* partialSuccess.rejectedSpans */
};

struct otlp_http;

/* url: the collector (http://host:4318); /v1/traces is added unless the
 * url already ends with it. headers: nheaders "Name: value" lines sent
 * with every request (an API key). NULL with the reason in err. */
struct otlp_http *otlp_http__new(const char *url, const char *const *headers,
				 int nheaders, char *err, size_t errlen);
void otlp_http__free(struct otlp_http *h); /* NULL-safe */
const char *otlp_http__endpoint(const struct otlp_http *h);

/* POSTs one request carrying nspans spans. 0, or -1 (counted) with the
 * reason logged. */
int otlp_http__post(struct otlp_http *h, const char *body, size_t len,
		    uint64_t nspans);
const struct otlp_http_counts *otlp_http__counts(const struct otlp_http *h);

#endif
