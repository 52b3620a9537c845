/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Probe, then select: every BPF hook has an ordered list of attach
 * candidates; the first one this kernel allows is chosen before load and
 * the others are disabled (bpf_program__set_autoload). */
#ifndef KMON_PROBE_H
#define KMON_PROBE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct btf;

enum attach_kind {
	ATTACH_TP_BTF,
	ATTACH_RAW_TP,
	ATTACH_TRACEPOINT,
	ATTACH_FENTRY,
	ATTACH_KPROBE,
	/* Programs that add a feature rather than hook an event: */
	ATTACH_ITER, /* a BPF iterator; target: its kind ("task_file") */
	ATTACH_RUN, /* run by user space (BPF_PROG_TEST_RUN); target:
			* what it runs over */
	ATTACH_CGROUP, /* attached to cgroups; target: the attach point */
	ATTACH_UPROBE, /* attached per process to a library's function;
			* target: the function */
	ATTACH_UPROBE_MULTI, /* the same through one BPF link a program
			      * (6.6): the program loads for it alone */
};

struct attach_candidate {
	enum attach_kind kind;
	const char *prog; /* program name in the BPF object */
	/* tp_btf / raw_tp: event name ("sched_switch"); tracepoint:
	 * "category/event"; fentry / kprobe: kernel function; iter: the
	 * iterator's target ("bpf_sk_storage_map"). */
	const char *target;
};

#define HOOK_MAX_CANDIDATES 4

struct hook {
	const char *name;
	struct attach_candidate cands[HOOK_MAX_CANDIDATES];
	int ncands;
	/* The collector works without it (an event some kernels lack, a
	 * program type a kernel refuses): a feature, on or off. */
	bool optional;
	/* An optional hook: what is lost when it is off, for the warning
	 * and --probe ("the owners of sockets older than kmond"). */
	const char *feature;
};

const char *attach_kind_name(enum attach_kind kind);
/* Whether this kernel allows c; if not, why says so. */
bool probe__available(const struct attach_candidate *c, char *why,
		      size_t whylen);
/* Index of the first candidate this kernel allows, or -1. */
int probe__choose(const struct hook *hook);
/* Enables the chosen candidate of each hook and disables the others in
 * obj (opened, not loaded). chosen[i] gets the choice for hooks[i].
 * Returns 0, or -ENOTSUP when some hook that is not optional has no
 * usable candidate; an optional one without is off, with one warning
 * naming the feature (once a run). Frees the kernel BTF it parsed: the
 * load that follows parses its own. */
int probe__select(const char *collector, struct bpf_object *obj,
		  const struct hook *hooks, int nhooks, int *chosen);
/* KMOND_PROBE_FAIL_LOAD (tests): makes the kernel refuse prog, the
 * program of c, if the variable names c. probe__select does it for the
 * candidates it chooses; a collector choosing another one, for that. */
struct bpf_program;
void probe__fail_load_if_asked(struct bpf_program *prog,
			       const struct attach_candidate *c);
/* c is not to be used for the rest of the run, for why (a collector's
 * own reason: it cannot serve how the collector runs here). False when
 * there is no room left to remember it. */
bool probe__refuse(const struct attach_candidate *c, const char *why);
/* The optional hooks of hooks[0..nhooks) that are off on this kernel, a
 * bit each (bit h: hooks[h]; nhooks at most 64). Probes: call it after a
 * start, not every interval. */
uint64_t probe__features_off(const struct hook *hooks, int nhooks);
/* A candidate's program that loaded but failed later (an iterator that
 * cannot be attached): noted as a load failure, so that the start that
 * fails after it refuses the candidate and starts again. */
void probe__note_failure(const char *prog, int err);
/* A collector that loads none of a hook's candidates although the kernel
 * has one (the choice cannot serve its configuration) says why, and
 * probe__describe prints that instead of the choice; why NULL: it loads
 * the choice. */
void probe__set_unloaded(const struct hook *hook, const char *why);
/* Prints one line per hook: its choice and why the others lost. */
void probe__describe(const char *collector, const struct hook *hooks,
		     int nhooks);
/* Frees the kernel BTF probing parsed (megabytes); the next probe
 * parses it again. */
void probe__release(void);
/* The kernel's BTF the probes read (NULL without one), parsed on first use
 * and held until probe__release(): a collector reading it before its
 * probe__select() shares that copy rather than parsing a second one. */
const struct btf *probe__kernel_btf(void);
/* Load failures: libbpf's messages go through probe__libbpf_message, which
 * notes the program it failed to load. After a start failed,
 * probe__refuse_failed marks the hook candidate of that program (if it is
 * one of hooks) unavailable for the rest of the run, logs it (an optional
 * hook left with none: one warning, once a run) and returns true:
 * starting again picks the next candidate. */
void probe__libbpf_message(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));
bool probe__refuse_failed(const char *collector, const struct hook *hooks,
			  int nhooks);
/* Runs start(ctx) until it succeeds or fails other than by a candidate
 * of hooks the kernel refused (each refused one given up, undo(ctx)
 * cleaning the failed start up before the next). libbpf's warnings are
 * held meanwhile and printed only if it fails for good: a refusal kmond
 * handles shows only kmond's own line. Returns start's last result. */
int probe__start(const char *who, const struct hook *hooks, int nhooks,
		 int (*start)(void *ctx), void (*undo)(void *ctx), void *ctx);
/* For libbpf's print callback: holds a warning during probe__start and
 * returns true, else false (with -v the caller prints them at once). */
bool probe__hold_warning(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));
/* libbpf finds tracepoint ids in tracefs; mount it if nobody has. */
void probe__mount_tracefs(void);

#endif
