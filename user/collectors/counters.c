// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The counters collector: user-chosen kernel tracepoints (and functions,
 * where the kernel allows fentry or kprobes) counted per (process, event)
 * in the kernel; each interval emits the increase since the last one.
 *
 * The programs are loaded once. A reload only attaches and detaches links
 * (one per event, the event id as its cookie), so program ids stay. An
 * event that cannot be counted (no such tracepoint on this kernel, no way
 * to hook functions) is a warning naming it: the config may be shared by
 * kernels that differ. With `required: true` it stops kmond at start. */
#include <linux/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collectors/collector.h"
#include "bpf/counters.h"
#include "counters.skel.h"
#include "exporters/exporter.h"
#include "lib/deltas.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/maps.h"
#include "lib/xalloc.h"
#include "provider/provider.h"
#include "lib/record.h"
#include "lib/strbuf.h"
#include "loader/misses.h"
#include "loader/verified.h"

enum { HOOK_TRACEPOINTS, HOOK_FUNCTIONS, NR_HOOKS };

struct counter_event {
	char name[CONFIG_EVENT_MAX]; /* as configured */
	bool function;
	bool wanted; /* in the running config */
	struct bpf_link *link; /* NULL: not counted */
	struct counters_bpf *fentry; /* fentry: this function's own copy */
};

struct counters_collector {
	struct counters_bpf *skel;
	struct kmond *k;
	int fn_hook; /* chosen candidate for functions, -1: none */
	/* the index is the event id (cookie); ids are never reused */
	struct counter_event events[COUNTERS_MAX_EVENTS];
	int nevents;
	/* runs skipped by fentry copies since destroyed */
	uint64_t detached_missed;
	/* key_id() -> count already reported */
	struct hashmap *reported;
	struct record rec;
};

/* `--probe` shows what this kernel allows: any tracepoint (probed with a
 * common one), and functions through fentry or kprobes. */
/* one hook a paragraph, a candidate a line (clang-format 14 would
 * fold them) */
/* clang-format off */
static const struct hook counters_hooks[] = {
	[HOOK_TRACEPOINTS] = { "tracepoints",
	  { { ATTACH_TRACEPOINT, "counters_tp", "sched/sched_process_fork" } },
	  1 },
	[HOOK_FUNCTIONS] = { "functions",
	  { { ATTACH_FENTRY, "counters_fentry", "tcp_connect" },
	    { ATTACH_KPROBE, "counters_kprobe", "tcp_connect" } },
	  2, .optional = true,
	  .feature = "kernel functions are not counted" },
};
/* clang-format on */

static bool counters_uses_hook(const struct config *cfg, int h)
{
	return h != HOOK_FUNCTIONS || cfg->counters.nfunctions > 0;
}

/* --- events --- */

static int event_id(struct counters_collector *c, const char *name,
		    bool function)
{
	for (int i = 0; i < c->nevents; i++)
		if (c->events[i].function == function &&
		    strcmp(c->events[i].name, name) == 0)
			return i;
	if (c->nevents == COUNTERS_MAX_EVENTS)
		return -ENOSPC;
	snprintf(c->events[c->nevents].name, CONFIG_EVENT_MAX, "%s", name);
	c->events[c->nevents].function = function;
	return c->nevents++;
}

static int attach_tracepoint(struct counters_collector *c, int id)
{
	struct counter_event *ev = &c->events[id];
	LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = id);
	struct attach_candidate cand = { ATTACH_TRACEPOINT, NULL, NULL };
	char category[CONFIG_EVENT_MAX], path[CONFIG_EVENT_MAX + 1], why[256];
	char *name;
	int err;

	/* "category:name": the config parser checked the shape. */
	memcpy(category, ev->name, sizeof(category));
	name = strchr(category, ':');
	*name++ = '\0';
	snprintf(path, sizeof(path), "%s/%s", category, name);
	cand.target = path;
	if (!probe__available(&cand, why, sizeof(why))) {
		log_warn("counters: tracepoint %s does not exist on this "
			 "kernel (%s): not counted",
			 ev->name, why);
		return -ENOENT;
	}
	ev->link = bpf_program__attach_tracepoint_opts(
		c->skel->progs.counters_tp, category, name, &opts);
	if (!ev->link) {
		err = -errno;
		log_warn("counters: failed to attach tracepoint %s: %s",
			 ev->name, strerror(-err));
		return err;
	}
	log_info("counters: counting tracepoint %s", ev->name);
	return 0;
}

/* fentry fixes its target at load: one small copy of the object per
 * function, sharing the counts and control maps of the main one. */
static int load_fentry(struct counters_collector *c, int id)
{
	struct counter_event *ev = &c->events[id];
	struct counters_bpf *skel = counters_bpf__open();
	struct bpf_object_skeleton *s;
	int err, counts_fd, stats_fd;

	if (!skel)
		return -errno;
	ev->fentry = skel;
	s = skel->skeleton;
	for (int i = 0; i < s->prog_cnt; i++)
		bpf_program__set_autoload(*s->progs[i].prog,
					  *s->progs[i].prog ==
						  skel->progs.counters_fentry);
	err = bpf_program__set_attach_target(skel->progs.counters_fentry, 0,
					     ev->name);
	counts_fd = bpf_map__fd(c->skel->maps.counter_counts);
	stats_fd = bpf_map__fd(c->skel->maps.counter_stats);
	err = err ?: bpf_map__reuse_fd(skel->maps.counter_counts, counts_fd);
	err = err ?: bpf_map__reuse_fd(skel->maps.counter_stats, stats_fd);
	err = err ?: provider__share_maps(c->k->provider, skel->obj);
	return err ?: counters_bpf__load(skel);
}

static int attach_function(struct counters_collector *c, int id)
{
	struct counter_event *ev = &c->events[id];
	enum attach_kind kind =
		counters_hooks[HOOK_FUNCTIONS].cands[c->fn_hook].kind;
	int err = 0;

	if (kind == ATTACH_KPROBE) {
		LIBBPF_OPTS(bpf_kprobe_opts, opts, .bpf_cookie = id);

		ev->link = bpf_program__attach_kprobe_opts(
			c->skel->progs.counters_kprobe, ev->name, &opts);
	} else {
		LIBBPF_OPTS(bpf_trace_opts, opts, .cookie = id);

		err = load_fentry(c, id);
		if (!err)
			ev->link = bpf_program__attach_trace_opts(
				ev->fentry->progs.counters_fentry, &opts);
	}
	if (!err && !ev->link)
		err = -errno;
	if (err) {
		log_warn("counters: failed to attach %s to function %s: %s",
			 attach_kind_name(kind), ev->name, strerror(-err));
		counters_bpf__destroy(ev->fentry);
		ev->fentry = NULL;
		return err;
	}
	log_info("counters: counting function %s (%s)", ev->name,
		 attach_kind_name(kind));
	return 0;
}

static void detach(struct counters_collector *c, struct counter_event *ev)
{
	if (ev->fentry)
		c->detached_missed += misses__count(ev->fentry->obj);
	bpf_link__destroy(ev->link);
	ev->link = NULL;
	counters_bpf__destroy(ev->fentry);
	ev->fentry = NULL;
	log_info("counters: no longer counting %s", ev->name);
}

/* Says once per apply, naming them, which functions go uncounted and
 * why each way of hooking functions is refused. */
static void warn_functions(const struct counters_cfg *cc)
{
	const struct hook *h = &counters_hooks[HOOK_FUNCTIONS];
	struct strbuf list = { 0 }, whys = { 0 };
	char why[256];

	for (int i = 0; i < cc->nfunctions; i++)
		strbuf__addf(&list, "%s%s", i ? ", " : "", cc->functions[i]);
	for (int i = 0; i < h->ncands; i++) {
		if (probe__available(&h->cands[i], why, sizeof(why)))
			continue;
		strbuf__addf(&whys, "%s%s: %s", i ? "; " : "",
			     attach_kind_name(h->cands[i].kind), why);
	}
	log_warn("counters: functions [%s] are not counted: this kernel "
		 "allows neither fentry nor kprobes (%s); tracepoints are "
		 "still counted",
		 list.buf ? list.buf : "", whys.buf ? whys.buf : "");
	strbuf__free(&list);
	strbuf__free(&whys);
}

static int want(struct counters_collector *c, const char *name, bool function)
{
	int id = event_id(c, name, function);

	if (id < 0) {
		log_warn("counters: %s not counted: more than %d distinct "
			 "events since start",
			 name, COUNTERS_MAX_EVENTS);
		return id;
	}
	c->events[id].wanted = true;
	return 0;
}

/* Attaches what the config names and is not attached yet, detaches what
 * it no longer names; unchanged events keep their links (and counts).
 * Returns 0, or the last error: some named event is not counted. */
static int counters_apply(void *state, const struct config *cfg)
{
	struct counters_collector *c = state;
	const struct counters_cfg *cc = &cfg->counters;
	int err = 0, ret;

	for (int i = 0; i < c->nevents; i++)
		c->events[i].wanted = false;
	for (int i = 0; i < cc->ntracepoints; i++)
		err = want(c, cc->tracepoints[i], false) ?: err;
	if (c->fn_hook >= 0) {
		for (int i = 0; i < cc->nfunctions; i++)
			err = want(c, cc->functions[i], true) ?: err;
	} else if (cc->nfunctions) {
		warn_functions(cc);
		err = -ENOTSUP;
	}
	for (int i = 0; i < c->nevents; i++) {
		struct counter_event *ev = &c->events[i];

		if (!ev->wanted && ev->link)
			detach(c, ev);
		if (!ev->wanted || ev->link)
			continue;
		ret = ev->function ? attach_function(c, i) :
				     attach_tracepoint(c, i);
		err = ret ?: err;
	}
	return err;
}

/* --- records --- */

struct walk_ctx {
	struct counters_collector *c;
	uint64_t ts;
};

/* 9 bits of event (COUNTERS_MAX_EVENTS), 22 of pid, 32 of service. */
static uint64_t key_id(const void *k)
{
	const struct counters_key *key = k;

	return (uint64_t)key->svc << 32 | (uint64_t)key->pid << 9 | key->event;
}

static void emit(void *ctx, const void *k, uint64_t count)
{
	const struct counters_key *key = k;
	struct counters_collector *c = ((struct walk_ctx *)ctx)->c;
	struct proc_name who;

	if (key->event >= (__u32)c->nevents)
		return;
	provider__name(c->k->provider, key->pid, key->svc, &who);
	record__begin(&c->rec, "counter", ((struct walk_ctx *)ctx)->ts,
		      c->k->cfg.node);
	provider__record(&c->rec, key->pid, &who);
	record__str(&c->rec, "event", c->events[key->event].name);
	record__str(&c->rec, "type",
		    c->events[key->event].function ? "function" : "tracepoint");
	record__u64(&c->rec, "count", count);
	record__end(&c->rec);
	exporter__send(c->k->exporter, &c->rec);
}

/* Its last counts went out: an exited process counts no more, a detached
 * event neither. */
static bool finished(void *ctx, const void *k, bool grew)
{
	const struct counters_key *key = k;
	struct counters_collector *c = ((struct walk_ctx *)ctx)->c;
	struct proc_name who;

	(void)grew; /* a live key stays, idle or not */
	provider__name(c->k->provider, key->pid, key->svc, &who);
	return key->event >= (__u32)c->nevents || !c->events[key->event].link ||
	       who.gone;
}

static void counters_collect(void *state, struct kmond *k, uint64_t ts)
{
	struct counters_collector *c = state;
	struct walk_ctx ctx = { c, ts };
	struct delta_walk walk = {
		.map_fd = bpf_map__fd(c->skel->maps.counter_counts),
		.key_size = sizeof(struct counters_key),
		.key_id = key_id,
		.emit = emit,
		.finished = finished,
		.ctx = &ctx,
	};

	(void)k;
	deltas__walk(c->reported, &walk);
}

/* Runs the fentry copies skipped, those destroyed included. */
static uint64_t fentry_missed(const struct counters_collector *c)
{
	uint64_t missed = c->detached_missed;

	for (int i = 0; i < c->nevents; i++)
		if (c->events[i].fentry)
			missed += misses__count(c->events[i].fentry->obj);
	return missed;
}

static void counters_stats(void *state, struct collector_stats *st)
{
	struct counters_collector *c = state;
	int fd = bpf_map__fd(c->skel->maps.counter_stats);
	__u32 events = COUNTERS_EVENTS, full = COUNTERS_MAP_FULL;

	st->events = map_percpu_sum(fd, &events);
	st->lost = map_percpu_sum(fd, &full);
	st->missed = misses__count(c->skel->obj) + fentry_missed(c);
	st->lost += st->missed;
}

/* --- life cycle --- */

static void counters_stop(void *state)
{
	struct counters_collector *c = state;

	if (!c)
		return;
	for (int i = 0; i < c->nevents; i++) {
		bpf_link__destroy(c->events[i].link);
		counters_bpf__destroy(c->events[i].fentry);
	}
	counters_bpf__destroy(c->skel);
	hashmap__free(c->reported);
	record__free(&c->rec);
	free(c);
}

/* The tracepoint program always loads; the kprobe one only where kprobes
 * are the way to hook functions; fentry copies are loaded per function. */
static int counters_select(struct counters_collector *c)
{
	int chosen;
	int err;

	/* Functions first: probe__select frees the kernel BTF before the
	 * load, and probing after it would hold a copy through the load. */
	c->fn_hook = probe__choose(&counters_hooks[HOOK_FUNCTIONS]);
	err = probe__select("counters", c->skel->obj,
			    &counters_hooks[HOOK_TRACEPOINTS], 1, &chosen);
	if (err)
		return err;
	bpf_program__set_autoload(c->skel->progs.counters_fentry, false);
	bpf_program__set_autoload(
		c->skel->progs.counters_kprobe,
		c->fn_hook >= 0 &&
			counters_hooks[HOOK_FUNCTIONS].cands[c->fn_hook].kind ==
				ATTACH_KPROBE);
	return 0;
}

static int counters_start(struct kmond *k, void **state)
{
	struct counters_collector *c = xcalloc(1, sizeof(*c));
	int err;

	c->k = k;
	c->reported = hashmap__new();
	c->skel = counters_bpf__open();
	if (!c->skel) {
		err = -errno;
		log_error("failed to open counters: %s", strerror(-err));
		goto cleanup;
	}
	err = counters_select(c);
	if (err)
		goto cleanup;
	err = provider__share_maps(k->provider, c->skel->obj);
	if (err)
		goto cleanup;
	err = counters_bpf__load(c->skel);
	if (err) {
		log_debug("failed to load counters: %s", strerror(-err));
		goto cleanup;
	}
	verified__log("counters", c->skel->obj);
	/* Nothing to attach by name: every link is made here. */
	err = counters_apply(c, &k->cfg);
	if (err && k->cfg.counters.sw.required) {
		log_error("counters: required, but not every configured "
			  "event can be counted");
		goto cleanup;
	}
	*state = c;
	return 0;
cleanup:
	counters_stop(c);
	return err;
}

const struct collector_ops counters_collector = {
	.name = "counters",
	.hooks = counters_hooks,
	.nhooks = NR_HOOKS,
	.cfg_offset = offsetof(struct config, counters),
	.uses_hook = counters_uses_hook,
	.start = counters_start,
	.apply = counters_apply,
	.collect = counters_collect,
	.stats = counters_stats,
	.stop = counters_stop,
};
