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

#include "collectors/collector.h"
#include "daemon/config_watch.h"
#include "daemon/daemon.h"
#include "exporters/exporter.h"
#include "lib/clock.h"
#include "lib/heap.h"
#include "lib/log.h"
#include "daemon/privilege.h"
#include "provider/container.h"
#include "provider/provider.h"
#include "lib/record.h"
#include "loader/rings.h"
#include "daemon/stats.h"
#include "sym/ksyms.h"

#define MAX_COLLECTORS 16
#define EXIT_FLUSH_MS 10000

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t reload_requested;
bool daemon_watch_config;

struct running {
	const struct collector_ops *ops;
	void *state; /* NULL when not running */
	const char *attach;
	uint64_t features_off; /* its optional hooks off (probe.h) */
};

static struct running running[MAX_COLLECTORS];
static int nrunning;
static struct reload_counts reload_counts;

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

/* --- collectors --- */

/* The attach of the first hook this kernel has: an optional first hook
 * may be absent (bio's block_io_start before 6.5) while the others run. */
static const char *first_attach(const struct collector_ops *ops)
{
	for (int i = 0; i < ops->nhooks; i++) {
		int chosen = probe__choose(&ops->hooks[i]);

		if (chosen >= 0)
			return attach_kind_name(
				ops->hooks[i].cands[chosen].kind);
	}
	return "unavailable";
}

/* The optional hooks the kernel refused, of those cfg uses. */
static uint64_t features_off(const struct collector_ops *ops,
			     const struct config *cfg)
{
	uint64_t off = probe__features_off(ops->hooks, ops->nhooks);

	for (int h = 0; h < ops->nhooks && h < 64 && ops->uses_hook; h++)
		if (!ops->uses_hook(cfg, h))
			off &= ~(1ULL << h);
	return off;
}

struct starting {
	struct kmond *k;
	struct running *r;
};

static int start_once(void *ctx)
{
	struct starting *s = ctx;

	return s->r->ops->start(s->k, &s->r->state);
}

/* A start that failed may have added rings: they go before the next. */
static void start_undo(void *ctx)
{
	struct starting *s = ctx;

	rings__forget(s->k->rings, s->r);
}

static int collector_start(struct kmond *k, struct running *r)
{
	struct starting s = { k, r };
	int err;

	rings__set_owner(k->rings, r);
	/* A chosen method that fails to load gives way to the next one. */
	err = probe__start(r->ops->name, r->ops->hooks, r->ops->nhooks,
			   start_once, start_undo, &s);
	rings__set_owner(k->rings, NULL);
	if (err) {
		rings__forget(k->rings, r);
		r->state = NULL;
		log_error("collector %s is not running: %s", r->ops->name,
			  strerror(-err));
		return collector__switch(r->ops, &k->cfg)->required ? err : 0;
	}
	/* both from one parse of the kernel's BTF (features_off frees it) */
	r->attach = first_attach(r->ops);
	r->features_off = features_off(r->ops, &k->cfg);
	log_info("collector %s: running (%s)", r->ops->name, r->attach);
	return 0;
}

static void collector_stop(struct kmond *k, struct running *r)
{
	if (!r->state)
		return;
	rings__forget(k->rings, r);
	r->ops->stop(r->state);
	r->state = NULL;
	log_info("collector %s: stopped", r->ops->name);
}

static int collectors_start(struct kmond *k)
{
	for (nrunning = 0; collectors[nrunning]; nrunning++) {
		struct running *r = &running[nrunning];

		r->ops = collectors[nrunning];
		if (collector__switch(r->ops, &k->cfg)->enabled &&
		    collector_start(k, r))
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
	uint64_t wall = mono_ns();
	struct self_usage u;
	double cpu = 0;

	/* Rings may wake us only per batch (tcp): every event up to now is
	 * handled before the aggregates of the interval go out. */
	rings__consume(k->rings);
	for (int i = 0; i < nrunning; i++) {
		struct running *r = &running[i];

		reports[i] = (struct collector_report){
			.name = r->ops->name,
			.attach = r->state ? r->attach : "off",
			.running = r->state != NULL,
			.ops = r->ops,
			.state = r->state,
			.features_off = r->state ? r->features_off : 0,
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
	stats__record(&iv->rec, k, &reload_counts, ts, cpu, &u, reports,
		      nrunning);
	exporter__send(k->exporter, &iv->rec);
	exporter__flush(k->exporter, 0);
	provider__end_interval(k->provider);
}

/* --- reload --- */

static void reload_refused(const char *why)
{
	log_error("%s", why);
	log_error("reload refused: still running the previous configuration");
	reload_counts.failures++;
}

/* Moves the provider and every collector to k->cfg. Returns the number of
 * parts that failed to apply it (each logged with its reason). */
static int reload_apply(struct kmond *k)
{
	int failed = 0, err;

	err = provider__apply(k->provider, &k->cfg);
	if (err) {
		log_error("reload: the provider failed to apply it: %s",
			  strerror(-err));
		failed++;
	}
	for (int i = 0; i < nrunning; i++) {
		struct running *r = &running[i];
		bool want = collector__switch(r->ops, &k->cfg)->enabled;

		if (want && !r->state) {
			collector_start(k, r); /* says why it did not start */
			failed += !r->state;
		} else if (!want && r->state) {
			/* its last records first: what its rings and its
			 * kernel-side batches still hold, as at exit */
			rings__consume(k->rings);
			k->last_collect = true;
			r->ops->collect(r->state, k, clock_ns(CLOCK_REALTIME));
			k->last_collect = false;
			collector_stop(k, r);
		} else if (r->state) {
			err = r->ops->apply(r->state, &k->cfg);
			if (err) {
				log_error(
					"reload: collector %s failed to apply it: %s",
					r->ops->name, strerror(-err));
				failed++;
			}
		}
	}
	return failed;
}

static void reload(struct kmond *k)
{
	struct config next, old;
	char err[1024];

	log_info("SIGHUP: reloading %s", k->cfg.file);
	if (daemon__load_config(&next, k->cfg.file, err, sizeof(err))) {
		reload_refused(err);
		return;
	}
	if (exporter__reconfigure(k->exporter, &k->cfg, &next, EXIT_FLUSH_MS,
				  err, sizeof(err))) {
		config__free(&next);
		reload_refused(err);
		return;
	}
	exporter__reopen(k->exporter); /* log rotation */
	old = k->cfg;
	k->cfg = next;
	/* The config is valid, so it stays: a part that cannot apply it is
	 * counted and logged, and the others run on it. */
	if (reload_apply(k))
		reload_counts.failures++;
	probe__release();
	ksyms__preload(); /* a collector the reload started may want it */
	config__free(&old);
	reload_counts.reloads++;
	log_info("reloaded %s", k->cfg.file);
}

/* A reload may start collectors: their BPF loads with the heap held. */
static void reload_held(struct kmond *k)
{
	heap__hold();
	reload(k);
	heap__settle();
}

/* --- the loop --- */

static void run_loop(struct kmond *k, uint64_t duration_ns)
{
	struct interval iv = { 0 };
	uint64_t now = mono_ns();
	uint64_t next_tick = now + k->cfg.interval_ns;
	uint64_t deadline = duration_ns ? now + duration_ns : 0;
	struct config_watch *watch =
		daemon_watch_config ? config_watch__new(k->cfg.file) : NULL;

	record__init(&iv.rec);
	iv.last_wall_ns = now;
	self_usage(&(struct self_usage){ 0 });
	while (!stop_requested) {
		uint64_t until = next_tick;
		int err;

		if (deadline && deadline < until)
			until = deadline;
		err = rings__poll(
			k->rings,
			until > now ? (int)((until - now) / 1000000) + 1 : 0);
		if (err < 0 && err != -EINTR)
			log_warn("ringbuf poll: %s", strerror(-err));
		if (config_watch__changed(watch)) {
			log_info("%s changed on disk", k->cfg.file);
			reload_requested = 1;
		}
		if (reload_requested) {
			reload_requested = 0;
			reload_held(k);
		}
		now = mono_ns();
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
	k->last_collect = true;
	interval_end(k, &iv);
	exporter__flush(k->exporter, EXIT_FLUSH_MS);
	record__free(&iv.rec);
	config_watch__free(watch);
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap) __attribute__((format(printf, 2, 0)));

static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	probe__libbpf_message(fmt, ap);
	if (level == LIBBPF_DEBUG || (level == LIBBPF_INFO && !log_verbose))
		return 0;
	if (!log_verbose && probe__hold_warning(fmt, ap))
		return 0;
	/* most of libbpf's lines say "libbpf: " themselves */
	fprintf(stderr,
		strncmp(fmt, "libbpf: ", 8) ? "kmond: libbpf: " : "kmond: ");
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
	struct self_usage u;
	char err[1024];
	int ret = 1, err_drop;

	memset(cfg, 0, sizeof(*cfg)); /* k owns it now */
	libbpf_set_print(libbpf_log);
	install_signals();
	probe__mount_tracefs();
	k.rings = rings__new();
	if (provider__new(k.rings, &k.cfg, &k.provider))
		goto cleanup;
	if (collectors_start(&k))
		goto cleanup;
	probe__release();
	ksyms__preload();
	err_drop = privilege__drop(
		k.cfg.tcp.sw.enabled && k.cfg.tcp.protocols,
		k.cfg.tcp.sw.enabled && k.cfg.tcp.protocols && k.cfg.tcp.tls);
	if (err_drop) {
		log_error("failed to drop capabilities: %s",
			  strerror(-err_drop));
		goto cleanup;
	}
	/* The sinks open after the drop, as a reload opens them: a thread
	 * keeps the capabilities it was created with, and librdkafka starts
	 * its threads in the open. */
	k.exporter = exporter__new(&k.cfg, err, sizeof(err));
	if (!k.exporter) {
		log_error("%s", err);
		goto cleanup;
	}
	heap__settle(); /* held since main() */
	self_usage(&u);
	/* ready: tests and probes wait for this line (its figures are
	 * bench/startup.sh's) */
	log_info("running on %s, interval %llu ms (ready %.2f s after exec, "
		 "%.2f s of CPU)",
		 k.cfg.file, (unsigned long long)(k.cfg.interval_ns / 1000000),
		 self_age_s(), u.cpu_ns / 1e9);
	run_loop(&k, duration_ns);
	ret = 0;
cleanup:
	/* No poll after this: the rings go before their owners, so stopping
	 * each collector has no set to rebuild. */
	rings__free(k.rings);
	k.rings = NULL; /* collectors stop with no set to rebuild */
	collectors_stop(&k);
	probe__release();
	ksyms__unload();
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
		if (!provider_hooks[h].optional &&
		    probe__choose(&provider_hooks[h]) < 0) {
			fprintf(stderr,
				"provider: %s: no attach method works\n",
				provider_hooks[h].name);
			ret = 1;
		}
	for (int i = 0; collectors[i]; i++) {
		const struct collector_ops *ops = collectors[i];

		if (!collector__switch(ops, cfg)->enabled)
			continue;
		for (int h = 0; h < ops->nhooks; h++) {
			if (ops->uses_hook && !ops->uses_hook(cfg, h))
				continue;
			if (probe__choose(&ops->hooks[h]) >= 0)
				continue;
			/* an optional hook this config names (counters'
			 * functions) is needed when the collector is */
			if (ops->hooks[h].optional &&
			    !(ops->uses_hook &&
			      collector__switch(ops, cfg)->required)) {
				fprintf(stderr, "%s: %s off (%s)\n", ops->name,
					ops->hooks[h].name,
					ops->hooks[h].feature ?: "optional");
				continue;
			}
			fprintf(stderr, "%s: %s: no attach method works%s\n",
				ops->name, ops->hooks[h].name,
				collector__switch(ops, cfg)->required ?
					" (required)" :
					"");
			if (collector__switch(ops, cfg)->required)
				ret = 1;
		}
	}
	return ret;
}

/* --probe must say what a start would load, not only what the kernel
 * lists: every collector is started once with all its hooks in use, so a
 * method the kernel refuses at load shows as refused, and the method that
 * loaded in its place as the choice. Needs the rights a run needs: without
 * them (the provider does not load) the lines say what probing found. */
static const char probe_config[] = "collectors:\n"
				   "  syscall: { enabled: true }\n"
				   "  drop: { enabled: true }\n"
				   "  bio: { enabled: true, slow: 1h }\n"
				   "  offcpu: { enabled: true }\n"
				   "  tcp: { enabled: true }\n"
				   "  counters: { enabled: true }\n";

static void probe_loads(void)
{
	struct kmond k = { 0 };
	char err[256];

	if (config__parse(&k.cfg, "--probe", probe_config,
			  sizeof(probe_config) - 1, err, sizeof(err))) {
		log_error("%s", err);
		return;
	}
	libbpf_set_print(libbpf_log);
	k.rings = rings__new();
	if (provider__new(k.rings, &k.cfg, &k.provider) == 0) {
		collectors_start(&k);
		rings__free(k.rings);
		k.rings = NULL; /* collectors stop with no set to rebuild */
		collectors_stop(&k);
		provider__destroy(k.provider);
	}
	rings__free(k.rings);
	config__free(&k.cfg);
}

void daemon__probe(void)
{
	probe__mount_tracefs();
	probe_loads();
	probe__describe("provider", provider_hooks, provider_nhooks);
	/* Containers are found by cgroup path in any hierarchy, so every
	 * mode works; the mode says where to look when one is not found. */
	printf("%-10s %-14s %s\n", "provider", "cgroups", cgroup__mode());
	for (int i = 0; collectors[i]; i++)
		probe__describe(collectors[i]->name, collectors[i]->hooks,
				collectors[i]->nhooks);
}
