/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Probe, then select: every BPF hook has an ordered list of attach
 * candidates; the first one this kernel allows is chosen before load and
 * the others are disabled (bpf_program__set_autoload). */
#ifndef KMON_PROBE_H
#define KMON_PROBE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct bpf_object;
struct btf;

enum attach_kind {
	ATTACH_TP_BTF,
	ATTACH_RAW_TP,
	ATTACH_TRACEPOINT,
	ATTACH_FENTRY,
	ATTACH_KPROBE,
};

struct attach_candidate {
	enum attach_kind kind;
	const char *prog;   /* program name in the BPF object */
	/* tp_btf / raw_tp: event name ("sched_switch"); tracepoint:
	 * "category/event"; fentry / kprobe: kernel function. */
	const char *target;
};

#define HOOK_MAX_CANDIDATES 4

struct hook {
	const char *name;
	struct attach_candidate cands[HOOK_MAX_CANDIDATES];
	int ncands;
	/* The collector works without it (an event some kernels lack). */
	bool optional;
};

const char *attach_kind_name(enum attach_kind kind);
/* Whether this kernel allows c; if not, why says so. */
bool probe__available(const struct attach_candidate *c, char *why,
		      size_t whylen);
/* Index of the first candidate this kernel allows, or -1. */
int probe__choose(const struct hook *hook);
/* Enables the chosen candidate of each hook and disables the others in
 * obj (opened, not loaded). chosen[i] gets the choice for hooks[i].
 * Returns 0, or -ENOTSUP when some hook has no usable candidate. Frees
 * the kernel BTF it parsed: the load that follows parses its own. */
int probe__select(struct bpf_object *obj, const struct hook *hooks,
		  int nhooks, int *chosen);
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
 * notes the program it failed to load. After a collector's start failed,
 * probe__refuse_failed marks the hook candidate of that program (if it is
 * one of hooks) unavailable for the rest of the run, logs it and returns
 * true: starting again picks the next candidate. */
void probe__libbpf_message(const char *fmt, va_list ap);
void probe__forget_load_failure(void);
bool probe__refuse_failed(const char *collector, const struct hook *hooks,
			  int nhooks);
/* libbpf finds tracepoint ids in tracefs; mount it if nobody has. */
void probe__mount_tracefs(void);

#endif
