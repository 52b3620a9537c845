// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One curl easy handle for the life of kmon-trace: its connection is
 * kept alive between requests. A request that fails (no connection, a
 * 5xx or 429 answer) is tried once more, then counted as failed; a
 * collector that refuses some spans says so in partialSuccess. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "http.h"
#include "lib/json_parse.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

#define TIMEOUT_MS 10000L
#define ATTEMPTS 2

struct otlp_http {
	CURL *curl;
	struct curl_slist *headers;
	char *endpoint;
	struct strbuf answer;
	struct otlp_http_counts c;
};

static size_t on_answer(char *data, size_t size, size_t n, void *ctx)
{
	struct strbuf *sb = ctx;

	if (sb->len < 65536) /* a partialSuccess message, not a body */
		strbuf__add(sb, data, size * n);
	return size * n;
}

struct otlp_http *otlp_http__new(const char *url, const char *const *headers,
				 int nheaders, char *err, size_t errlen)
{
	static const char path[] = "/v1/traces";
	struct otlp_http *h;
	size_t len = strlen(url);
	int i;

	for (i = 0; i < nheaders; i++) {
		const char *colon = strchr(headers[i], ':');

		if (!colon || colon == headers[i] ||
		    strpbrk(headers[i], "\r\n")) {
			snprintf(err, errlen,
				 "-H %s: not a \"Name: value\" header",
				 headers[i]);
			return NULL;
		}
	}

	if (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0) {
		snprintf(err, errlen, "%s: not an http:// or https:// URL",
			 url);
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "libcurl cannot start");
		return NULL;
	}
	h = xcalloc(1, sizeof(*h));
	while (len && url[len - 1] == '/')
		len--;
	if (len >= sizeof(path) - 1 && strncmp(url + len - (sizeof(path) - 1),
					       path, sizeof(path) - 1) == 0)
		h->endpoint = xstrndup(url, len);
	else {
		h->endpoint = xmalloc(len + sizeof(path));
		memcpy(h->endpoint, url, len);
		memcpy(h->endpoint + len, path, sizeof(path));
	}
	h->curl = curl_easy_init();
	if (!h->curl) {
		snprintf(err, errlen, "libcurl: no handle");
		otlp_http__free(h);
		return NULL;
	}
	h->headers = curl_slist_append(NULL, "Content-Type: application/json");
	for (i = 0; i < nheaders; i++)
		h->headers = curl_slist_append(h->headers, headers[i]);
	curl_easy_setopt(h->curl, CURLOPT_URL, h->endpoint);
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, TIMEOUT_MS);
	curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_answer);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &h->answer);
	curl_easy_setopt(h->curl, CURLOPT_USERAGENT, "kmon-trace");
	return h;
}

void otlp_http__free(struct otlp_http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
	strbuf__free(&h->answer);
	free(h->endpoint);
	free(h);
	curl_global_cleanup();
}

const char *otlp_http__endpoint(const struct otlp_http *h)
{
	return h->endpoint;
}

/* ExportTraceServiceResponse: {"partialSuccess":{"rejectedSpans":"N",..}} */
static uint64_t rejected_spans(const struct strbuf *answer)
{
	struct json_error err;
	struct json_value *v;
	const struct json_value *n;
	uint64_t r = 0;
	const char *s;

	if (!answer->len)
		return 0;
	v = json__parse(answer->buf, answer->len, &err);
	n = json__get(json__get(v, "partialSuccess"), "rejectedSpans");
	s = json__str(n);
	if (s)
		r = strtoull(s, NULL, 10);
	else
		json__u64(n, &r);
	json__free(v);
	return r;
}

int otlp_http__post(struct otlp_http *h, const char *body, size_t len,
		    uint64_t nspans)
{
	long status = 0;
	CURLcode rc = CURLE_OK;
	int attempt;

	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	for (attempt = 0; attempt < ATTEMPTS; attempt++) {
		strbuf__reset(&h->answer);
		rc = curl_easy_perform(h->curl);
		status = 0;
		if (rc == CURLE_OK)
			curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE,
					  &status);
		if (rc == CURLE_OK && status / 100 == 2) {
			h->c.posts++;
			h->c.spans_rejected += rejected_spans(&h->answer);
			return 0;
		}
		/* 4xx but 429: the collector will refuse it again. */
		if (rc == CURLE_OK && status != 429 && status < 500)
			break;
	}
	h->c.failed++;
	h->c.spans_failed += nspans;
	if (rc != CURLE_OK)
		fprintf(stderr, "kmon-trace: POST %s: %s\n", h->endpoint,
			curl_easy_strerror(rc));
	else
		fprintf(stderr, "kmon-trace: POST %s: HTTP %ld %.*s\n",
			h->endpoint, status,
			(int)(h->answer.len < 200 ? h->answer.len : 200),
			h->answer.buf ? h->answer.buf : "");
	return -1;
}

const struct otlp_http_counts *otlp_http__counts(const struct otlp_http *h)
{
	return &h->c;
}
