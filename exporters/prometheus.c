// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The prometheus sink: kmond's aggregates as Prometheus metrics on
 * GET /metrics (text format 0.0.4), served by libmicrohttpd.
 *
 * The daemon thread adds each record to the series (prom_metrics.c) and,
 * once per interval, renders them into a buffer that it swaps in under a
 * mutex. libmicrohttpd's own thread answers scrapes from the last buffer
 * it was given: a scrape never waits for the collectors, and the daemon
 * thread never waits for a client (only for the copy of one buffer).
 *
 * The series live in one table per process that every prometheus sink
 * shares, so counters go on growing across reloads, a changed listen
 * address included (the new sink opens while the old still holds the
 * table). Only the oldest sink feeds and renders it: with two listen
 * addresses a record still counts once. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <zlib.h>

#include "config/config.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "exporters/prom_metrics.h"
#include "exporters/prom_series.h"
#include "lib/hostport.h"
#include "exporters/sink.h"

/* A client that stops reading (or never sends its request) is dropped
 * after this; it holds a connection slot, nothing else. */
#define HTTP_TIMEOUT_S 10
#define HTTP_CONNECTIONS 32
/* Request line and headers must fit: past it libmicrohttpd answers 431
 * (or 414 for a long URL) and closes. */
#define HTTP_MEMORY_LIMIT (32 * 1024)
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct blob {
	char *buf;
	size_t len;
};

struct sink {
	char *listen;
	int fd; /* bound and listening from open(); libmicrohttpd's later */
	struct MHD_Daemon *mhd;
	bool http_failed; /* said once, not every interval */
	uint64_t expire_ns, max_series;
	struct sink_stats st;
};

static struct {
	int nsinks;
	struct sink *sinks[CONFIG_MAX_EXPORTERS]; /* [0] feeds the table */
	struct prom_table *table;
	char node[CONFIG_NAME_MAX];
	bool dirty, saw_stats;
	struct strbuf render; /* daemon thread only */
	pthread_mutex_t lock; /* guards what follows */
	struct strbuf served;
	uint64_t generation; /* of served: one more at each swap */
	struct blob gz; /* served gzipped, made by the first scrape asking */
	uint64_t gz_generation;
} shared = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* --- the listen address --- */

/* Binds now, so a port already taken fails the start (or the reload)
 * with the reason, before anything else changes. */
static int listen_on(const char *addr, char *err, size_t errlen)
{
	char host[HOSTPORT_HOST_MAX], port[8], why[128];
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *res = NULL;
	int fd = -1, one = 1, gai, ret;

	if (hostport__parse(addr, host, sizeof(host), port, sizeof(port), why,
			    sizeof(why))) {
		snprintf(err, errlen, "prometheus sink: listen %s", why);
		return -EINVAL;
	}
	gai = getaddrinfo(host, port, &hints, &res);
	if (gai) {
		snprintf(err, errlen, "prometheus sink: listen %s: %s", addr,
			 gai_strerror(gai));
		return -EINVAL;
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* Restarting while old connections sit in TIME_WAIT must work; a
	 * live listener still makes bind fail with EADDRINUSE. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (res->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 64))
		goto fail;
	freeaddrinfo(res);
	return fd;
fail:
	ret = -errno;
	snprintf(err, errlen, "prometheus sink: cannot listen on %s: %s", addr,
		 strerror(errno));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return ret;
}

/* --- HTTP (libmicrohttpd's thread) --- */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status,
			     const char *body, size_t len, bool copy,
			     bool gzipped)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, (void *)body,
					       copy ? MHD_RESPMEM_MUST_COPY :
						      MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	if (gzipped)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
					"GET, HEAD");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK ?
					CONTENT_TYPE :
					"text/plain; charset=utf-8");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

#define STATIC_REPLY(conn, status, text) \
	reply(conn, status, text, sizeof(text) - 1, false, false)

/* Prometheus asks for gzip on every scrape: 10,000 series are 1 MB of
 * text, about 10 times less compressed. Only q=0 (a refusal) is looked
 * at in the header's syntax: nobody sends anything subtler for gzip. */
static bool wants_gzip(struct MHD_Connection *conn)
{
	const char *ae = MHD_lookup_connection_value(
		conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	const char *g = ae ? strstr(ae, "gzip") : NULL;

	return g && strncmp(g, "gzip;q=0", 8) != 0;
}

static int gzip(const char *in, size_t len, struct blob *out)
{
	z_stream z = { 0 };
	int ret;

	/* Level 1: most of the gain for a fraction of the CPU; 16 + 15
	 * window bits asks for a gzip header. */
	if (deflateInit2(&z, 1, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -1;
	out->buf = malloc(deflateBound(&z, len));
	if (!out->buf) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = len;
	z.next_out = (Bytef *)out->buf;
	z.avail_out = deflateBound(&z, len);
	ret = deflate(&z, Z_FINISH);
	out->len = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(out->buf);
		out->buf = NULL;
		return -1;
	}
	return 0;
}

/* The text gzipped once per interval, by the first scrape that asks, and
 * outside the lock (a copy is compressed): the swap never waits for it.
 * False when there is nothing to compress or it failed: plain text. */
static bool reply_gzip(struct MHD_Connection *conn, enum MHD_Result *ret)
{
	struct blob text = { 0 }, gz = { 0 };
	uint64_t generation;

	pthread_mutex_lock(&shared.lock);
	if (!shared.served.len) {
		pthread_mutex_unlock(&shared.lock);
		return false;
	}
	if (shared.gz_generation == shared.generation && shared.gz.buf) {
		*ret = reply(conn, MHD_HTTP_OK, shared.gz.buf, shared.gz.len,
			     true, true);
		pthread_mutex_unlock(&shared.lock);
		return true;
	}
	generation = shared.generation;
	text.len = shared.served.len;
	text.buf = malloc(text.len);
	if (text.buf)
		memcpy(text.buf, shared.served.buf, text.len);
	pthread_mutex_unlock(&shared.lock);
	if (!text.buf || gzip(text.buf, text.len, &gz)) {
		free(text.buf);
		return false;
	}
	free(text.buf);
	*ret = reply(conn, MHD_HTTP_OK, gz.buf, gz.len, true, true);
	pthread_mutex_lock(&shared.lock);
	if (shared.generation == generation) {
		free(shared.gz.buf);
		shared.gz = gz;
		shared.gz_generation = generation;
		gz.buf = NULL;
	}
	pthread_mutex_unlock(&shared.lock);
	free(gz.buf);
	return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	static int headers_seen;
	enum MHD_Result ret;

	(void)cls;
	(void)version;
	(void)upload_data;
	/* Bad requests are answered at once, on the first call: their body
	 * (if any) is never read and the connection closes after it. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return STATIC_REPLY(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				    "only GET and HEAD\n");
	if (strcmp(url, "/metrics") != 0)
		return STATIC_REPLY(conn, MHD_HTTP_NOT_FOUND,
				    "not found: metrics are at /metrics\n");
	/* A scrape is answered on the second call, once the request is
	 * complete: then libmicrohttpd keeps the connection open for the
	 * next one (Prometheus reuses it). A body is discarded. */
	if (!*con_cls) {
		*con_cls = &headers_seen;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (wants_gzip(conn) && reply_gzip(conn, &ret))
		return ret;
	/* A copy: the next interval's swap must not wait for this client. */
	pthread_mutex_lock(&shared.lock);
	ret = reply(conn, MHD_HTTP_OK,
		    shared.served.buf ? shared.served.buf : "",
		    shared.served.len, true, false);
	pthread_mutex_unlock(&shared.lock);
	return ret;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_debug("prometheus sink: %s", msg);
}

/* From the first flush, and from each flush while it fails: a server
 * that cannot start (no threads, say) is tried again, not given up. */
static void start_http(struct sink *s)
{
	s->mhd = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			MHD_USE_ERROR_LOG,
		0, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER,
		mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET, s->fd,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_TIMEOUT_S,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONNECTIONS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY_LIMIT,
		MHD_OPTION_END);
	if (!s->mhd) {
		if (!s->http_failed)
			log_error("prometheus sink %s: cannot start the HTTP "
				  "server (trying again each interval)",
				  s->listen);
		s->http_failed = true;
		return;
	}
	s->fd = -1; /* libmicrohttpd closes it */
}

/* --- the sink --- */

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static struct sink *listener_of(const char *listen)
{
	for (int i = 0; i < shared.nsinks; i++)
		if (strcmp(shared.sinks[i]->listen, listen) == 0)
			return shared.sinks[i];
	return NULL;
}

static int prom_open(struct sink **out, const struct exporter_cfg *cfg,
		     char *err, size_t errlen)
{
	struct sink *s;
	int fd = -1;

	if (shared.nsinks == CONFIG_MAX_EXPORTERS) {
		snprintf(err, errlen, "prometheus sink: too many");
		return -ENOSPC;
	}
	/* A reload that changes only expire or max_series: the old sink
	 * still holds the address and hands its server over as it closes. */
	if (!listener_of(cfg->listen)) {
		fd = listen_on(cfg->listen, err, errlen);
		if (fd < 0)
			return fd;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->listen = strdup(cfg->listen))) {
		free(s);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	s->fd = fd;
	s->expire_ns = cfg->expire_ns;
	s->max_series = cfg->max_series;
	/* The newest settings win: a reload that changes them opens a new
	 * sink, which takes over the table with its values. */
	if (!shared.table)
		shared.table = prom_table__new(cfg->expire_ns, cfg->max_series);
	else
		prom_table__set_limits(shared.table, cfg->expire_ns,
				       cfg->max_series);
	shared.sinks[shared.nsinks++] = s;
	log_info("prometheus sink: metrics on http://%s/metrics", s->listen);
	*out = s;
	return 0;
}

static int prom_send(struct sink *s, const struct record *r)
{
	s->st.sent++;
	s->st.delivered++;
	if (s != shared.sinks[0] || !prom_metrics__wants(r->kind))
		return 0;
	if (r->node)
		snprintf(shared.node, sizeof(shared.node), "%s", r->node);
	if (prom_metrics__ingest(shared.table, r->kind, r->json.buf,
				 r->json.len, mono_ns())) {
		log_debug("prometheus sink: a %s record it cannot read",
			  r->kind);
		s->st.delivered--;
		s->st.failed++;
		return -EINVAL;
	}
	shared.dirty = true;
	shared.saw_stats |= strcmp(r->kind, "stats") == 0;
	return 0;
}

/* Renders once per interval: at the flush that follows the stats record
 * (the daemon flushes before and after it), and at exit. */
static void render(void)
{
	struct strbuf tmp;
	uint64_t now = mono_ns();

	prom_table__expire(shared.table, now);
	prom_metrics__self(shared.table, shared.node, cpu_ns(), now);
	strbuf__reset(&shared.render);
	prom_table__render(shared.table, &shared.render);
	pthread_mutex_lock(&shared.lock);
	tmp = shared.served;
	shared.served = shared.render;
	shared.render = tmp;
	shared.generation++;
	pthread_mutex_unlock(&shared.lock);
	shared.dirty = false;
	shared.saw_stats = false;
}

static void prom_flush(struct sink *s, int timeout_ms)
{
	if (!s->mhd && s->fd >= 0)
		start_http(s);
	if (s == shared.sinks[0] && shared.dirty &&
	    (shared.saw_stats || timeout_ms > 0))
		render();
}

static void prom_stats(struct sink *s, struct sink_stats *st)
{
	*st = s->st;
}

static void prom_close(struct sink *s)
{
	struct sink *heir;
	int i;

	if (!s)
		return;
	for (i = 0; i < shared.nsinks && shared.sinks[i] != s; i++)
		;
	if (i < shared.nsinks) {
		memmove(&shared.sinks[i], &shared.sinks[i + 1],
			(shared.nsinks - i - 1) * sizeof(shared.sinks[0]));
		shared.nsinks--;
	}
	heir = listener_of(s->listen);
	if (heir && !heir->mhd && heir->fd < 0) {
		/* Its successor on the same address: the server goes on. */
		heir->mhd = s->mhd;
		heir->fd = s->fd;
	} else {
		if (s->mhd)
			MHD_stop_daemon(s->mhd);
		if (s->fd >= 0)
			close(s->fd);
	}
	if (shared.nsinks) {
		/* The newest sink's settings (a refused reload's go). */
		struct sink *last = shared.sinks[shared.nsinks - 1];

		prom_table__set_limits(shared.table, last->expire_ns,
				       last->max_series);
	} else {
		/* No prometheus sink left: a later one starts from zero. */
		prom_table__free(shared.table);
		shared.table = NULL;
		strbuf__free(&shared.render);
		strbuf__free(&shared.served);
		free(shared.gz.buf);
		shared.gz = (struct blob){ 0 };
		shared.dirty = shared.saw_stats = false;
	}
	free(s->listen);
	free(s);
}

const struct sink_ops prometheus_sink_ops = {
	.type = "prometheus",
	.open = prom_open,
	.send = prom_send,
	.flush = prom_flush,
	.stats = prom_stats,
	.close = prom_close,
};
