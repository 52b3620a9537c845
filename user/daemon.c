// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The daemon: starts the provider, the collectors and the exporter, then
 * drains ringbufs, collects every interval, and reloads on SIGHUP. Signal
 * handlers only set flags; this loop acts on them. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "collector.h"
#include "daemon.h"
#include "exporter.h"
#include "kmond.h"
#include "log.h"
#include "privilege.h"
#include "provider.h"
#include "record.h"
#include "stats.h"

#define MAX_COLLECTORS 16
#define EXIT_FLUSH_MS 10000

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t reload_requested;

struct running {
	const struct collector_ops *ops;
	void *state; /* NULL when not running */
	const char *attach;
};

static struct running running[MAX_COLLECTORS];
static int nrunning;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_reload(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static void install_signals(void)
{
	struct sigaction sa = { 0 };

	/* No SA_RESTART: a signal must cut the ringbuf poll short. */
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_reload;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int kmond__add_ringbuf(struct kmond *k, int map_fd, ring_buffer_sample_fn fn,
		       void *ctx)
{
	int err;

	if (k->nrings == KMOND_MAX_RINGS) {
		log_error("failed to add a ringbuf: more than %d", KMOND_MAX_RINGS);
		return -ENOSPC;
	}
	if (!k->rb) {
		k->rb = ring_buffer__new(map_fd, fn, ctx, NULL);
		err = k->rb ? 0 : -errno;
	} else {
		err = ring_buffer__add(k->rb, map_fd, fn, ctx);
	}
	if (err) {
		log_error("failed to add a ringbuf: %s", strerror(-err));
		return err;
	}
	k->rings[k->nrings++] =
		(struct kmond_ring){ map_fd, fn, ctx, k->ring_owner };
	return 0;
}

/* A collector that stops (or fails to start) takes its rings with it, or
 * the next poll would call back into freed state. libbpf cannot remove a
 * ring from a ring_buffer: drain everything while the owners are alive,
 * then rebuild the set from the others. */
static void rings_forget(struct kmond *k, const void *owner)
{
	struct kmond_ring keep[KMOND_MAX_RINGS];
	int nkeep = 0, nrings = k->nrings;

	for (int i = 0; i < nrings; i++)
		if (k->rings[i].owner != owner)
			keep[nkeep++] = k->rings[i];
	if (nkeep == nrings)
		return;
	ring_buffer__consume(k->rb);
	ring_buffer__free(k->rb);
	k->rb = NULL;
	k->nrings = 0;
	for (int i = 0; i < nkeep; i++) {
		k->ring_owner = keep[i].owner;
		kmond__add_ringbuf(k, keep[i].map_fd, keep[i].fn, keep[i].ctx);
	}
	k->ring_owner = NULL;
}

/* --- collectors --- */

/* The attach of the first hook this kernel has: an optional first hook
 * may be absent (bio's block_io_start before 6.5) while the others run. */
static const char *first_attach(const struct collector_ops *ops)
{
	for (int i = 0; i < ops->nhooks; i++) {
		int chosen = probe__choose(&ops->hooks[i]);

		if (chosen >= 0)
			return attach_kind_name(ops->hooks[i].cands[chosen].kind);
	}
	return "unavailable";
}

static int collector_start(struct kmond *k, struct running *r)
{
	/* Before the start, whose probe__select frees the kernel BTF this
	 * parses: after it, each start would parse it once more. */
	const char *attach = first_attach(r->ops);
	int err;

	k->ring_owner = r;
	err = r->ops->start(k, &r->state);
	k->ring_owner = NULL;
	if (err) {
		rings_forget(k, r);
		r->state = NULL;
		log_error("collector %s is not running: %s", r->ops->name,
			  strerror(-err));
		return r->ops->required(&k->cfg) ? err : 0;
	}
	r->attach = attach;
	log_info("collector %s: running (%s)", r->ops->name, r->attach);
	return 0;
}

static void collector_stop(struct kmond *k, struct running *r)
{
	if (!r->state)
		return;
	rings_forget(k, r);
	r->ops->stop(r->state);
	r->state = NULL;
	log_info("collector %s: stopped", r->ops->name);
}

static int collectors_start(struct kmond *k)
{
	for (nrunning = 0; collectors[nrunning]; nrunning++) {
		struct running *r = &running[nrunning];

		r->ops = collectors[nrunning];
		if (r->ops->enabled(&k->cfg) && collector_start(k, r))
			return -1;
	}
	return 0;
}

static void collectors_stop(struct kmond *k)
{
	for (int i = 0; i < nrunning; i++)
		collector_stop(k, &running[i]);
}

/* --- one interval --- */

struct interval {
	uint64_t last_wall_ns;
	uint64_t last_cpu_ns;
	struct record rec;
};

static void interval_end(struct kmond *k, struct interval *iv)
{
	struct collector_report reports[MAX_COLLECTORS];
	uint64_t ts = clock_ns(CLOCK_REALTIME);
	uint64_t wall = clock_ns(CLOCK_MONOTONIC);
	struct self_usage u;
	double cpu = 0;

	/* Rings may wake us only per batch (tcp): every event up to now is
	 * handled before the aggregates of the interval go out. */
	ring_buffer__consume(k->rb);
	for (int i = 0; i < nrunning; i++) {
		struct running *r = &running[i];

		reports[i] = (struct collector_report){
			.name = r->ops->name,
			.attach = r->state ? r->attach : "off",
			.running = r->state != NULL,
		};
		if (!r->state)
			continue;
		r->ops->collect(r->state, k, ts);
		r->ops->stats(r->state, &reports[i].st);
	}
	/* Flush first so the stats record counts this interval's records
	 * as delivered. */
	exporter__flush(k->exporter, 0);
	self_usage(&u);
	if (wall > iv->last_wall_ns && iv->last_wall_ns)
		cpu = 100.0 * (u.cpu_ns - iv->last_cpu_ns) /
		      (wall - iv->last_wall_ns);
	iv->last_wall_ns = wall;
	iv->last_cpu_ns = u.cpu_ns;
	stats__record(&iv->rec, k, ts, cpu, &u, reports, nrunning);
	exporter__send(k->exporter, &iv->rec);
	exporter__flush(k->exporter, 0);
	provider__end_interval(k->provider);
}

/* --- reload --- */

static void reload(struct kmond *k)
{
	struct config next, old;
	char err[1024];

	log_info("SIGHUP: reloading %s", k->cfg.file);
	if (daemon__load_config(&next, k->cfg.file, err, sizeof(err))) {
		log_error("%s", err);
		log_error("reload refused: still running the previous configuration");
		k->reload_failures++;
		return;
	}
	if (exporter__reconfigure(k->exporter, &k->cfg, &next, EXIT_FLUSH_MS,
				  err, sizeof(err))) {
		log_error("%s", err);
		log_error("reload refused: still running the previous configuration");
		config__free(&next);
		k->reload_failures++;
		return;
	}
	exporter__reopen(k->exporter); /* log rotation */
	old = k->cfg;
	k->cfg = next;
	provider__apply(k->provider, &k->cfg);
	for (int i = 0; i < nrunning; i++) {
		struct running *r = &running[i];
		bool want = r->ops->enabled(&k->cfg);

		if (want && !r->state)
			collector_start(k, r);
		else if (!want && r->state)
			collector_stop(k, r);
		else if (r->state)
			r->ops->apply(r->state, &k->cfg);
	}
	probe__release();
	config__free(&old);
	k->reloads++;
	log_info("reloaded %s", k->cfg.file);
}

/* --- the loop --- */

static void run_loop(struct kmond *k, uint64_t duration_ns)
{
	struct interval iv = { 0 };
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	uint64_t next_tick = now + k->cfg.interval_ns;
	uint64_t deadline = duration_ns ? now + duration_ns : 0;

	record__init(&iv.rec);
	iv.last_wall_ns = now;
	self_usage(&(struct self_usage){ 0 });
	while (!stop_requested) {
		uint64_t until = next_tick;
		int err;

		if (deadline && deadline < until)
			until = deadline;
		err = ring_buffer__poll(k->rb, until > now ?
						       (int)((until - now) / 1000000) + 1 :
						       0);
		if (err < 0 && err != -EINTR)
			log_warn("ringbuf poll: %s", strerror(-err));
		if (reload_requested) {
			reload_requested = 0;
			reload(k);
		}
		now = clock_ns(CLOCK_MONOTONIC);
		if (deadline && now >= deadline)
			break;
		if (now >= next_tick) {
			interval_end(k, &iv);
			next_tick += k->cfg.interval_ns;
			if (next_tick <= now)
				next_tick = now + k->cfg.interval_ns;
		}
	}
	/* What happened up to now still goes out: collect, flush. */
	interval_end(k, &iv);
	exporter__flush(k->exporter, EXIT_FLUSH_MS);
	record__free(&iv.rec);
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	if (level == LIBBPF_DEBUG ||
	    (level == LIBBPF_INFO && !log_verbose))
		return 0;
	fprintf(stderr, "kmond: libbpf: ");
	return vfprintf(stderr, fmt, ap);
}

int daemon__load_config(struct config *cfg, const char *path, char *err,
			size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	if (privilege__check_config(path, err, errlen))
		return -1;
	return config__load(cfg, path, err, errlen);
}

int daemon__run(struct config *cfg, uint64_t duration_ns)
{
	struct kmond k = { .cfg = *cfg };
	char err[1024];
	int ret = 1, err_drop;

	memset(cfg, 0, sizeof(*cfg)); /* k owns it now */
	libbpf_set_print(libbpf_log);
	install_signals();
	probe__mount_tracefs();
	k.exporter = exporter__new(&k.cfg, err, sizeof(err));
	if (!k.exporter) {
		log_error("%s", err);
		goto cleanup;
	}
	if (provider__new(&k, &k.cfg, &k.provider))
		goto cleanup;
	if (collectors_start(&k))
		goto cleanup;
	probe__release();
	err_drop = privilege__drop();
	if (err_drop) {
		log_error("failed to drop capabilities: %s", strerror(-err_drop));
		goto cleanup;
	}
	log_info("running on %s, interval %llu ms", k.cfg.file,
		 (unsigned long long)(k.cfg.interval_ns / 1000000));
	run_loop(&k, duration_ns);
	ret = 0;
cleanup:
	/* No poll after this: the rings go before their owners, so stopping
	 * each collector has no set to rebuild. */
	ring_buffer__free(k.rb);
	k.rb = NULL;
	k.nrings = 0;
	collectors_stop(&k);
	probe__release();
	provider__destroy(k.provider);
	exporter__free(k.exporter);
	config__free(&k.cfg);
	return ret;
}

int daemon__check(const struct config *cfg)
{
	int ret = 0;

	probe__mount_tracefs();
	for (int h = 0; h < provider_nhooks; h++)
		if (probe__choose(&provider_hooks[h]) < 0) {
			fprintf(stderr, "provider: %s: no attach method works\n",
				provider_hooks[h].name);
			ret = 1;
		}
	for (int i = 0; collectors[i]; i++) {
		const struct collector_ops *ops = collectors[i];

		if (!ops->enabled(cfg))
			continue;
		for (int h = 0; h < ops->nhooks; h++) {
			if (ops->uses_hook && !ops->uses_hook(cfg, h))
				continue;
			if (probe__choose(&ops->hooks[h]) >= 0)
				continue;
			fprintf(stderr, "%s: %s: no attach method works%s\n",
				ops->name, ops->hooks[h].name,
				ops->required(cfg) ? " (required)" : "");
			if (ops->required(cfg))
				ret = 1;
		}
	}
	return ret;
}

void daemon__probe(void)
{
	probe__mount_tracefs();
	probe__describe("provider", provider_hooks, provider_nhooks);
	for (int i = 0; collectors[i]; i++)
		probe__describe(collectors[i]->name, collectors[i]->hooks,
				collectors[i]->nhooks);
}
