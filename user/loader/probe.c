// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "loader/probe.h"
#include "loader/uprobe_multi.h"

#define TRACEFS "/sys/kernel/tracing"

static struct btf *vmlinux_btf;

const char *attach_kind_name(enum attach_kind kind)
{
	static const char *const names[] = {
		[ATTACH_TP_BTF] = "tp_btf",
		[ATTACH_RAW_TP] = "raw_tp",
		[ATTACH_TRACEPOINT] = "tracepoint",
		[ATTACH_FENTRY] = "fentry",
		[ATTACH_KPROBE] = "kprobe",
		[ATTACH_ITER] = "iter",
		[ATTACH_RUN] = "run",
		[ATTACH_CGROUP] = "cgroup",
		[ATTACH_UPROBE] = "uprobe",
		[ATTACH_UPROBE_MULTI] = "uprobe_multi",
	};

	return names[kind];
}

void probe__mount_tracefs(void)
{
	if (access(TRACEFS "/events", F_OK) == 0)
		return;
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL))
		log_debug("cannot mount tracefs on " TRACEFS ": %s",
			  strerror(errno));
	else
		log_debug("mounted tracefs on " TRACEFS);
}

void probe__release(void)
{
	btf__free(vmlinux_btf);
	vmlinux_btf = NULL;
}

const struct btf *probe__kernel_btf(void)
{
	if (!vmlinux_btf) {
		vmlinux_btf = btf__load_vmlinux_btf();
		if (libbpf_get_error(vmlinux_btf))
			vmlinux_btf = NULL;
	}
	return vmlinux_btf;
}

/* The answers the kernel's BTF gave, kept past probe__release: the BTF
 * does not change while kmond runs, and each probe that asked again
 * parsed it again (5 MiB): a start parsed it 50 times, 17 of them here,
 * as a collector's select, its attach and the features off ask the same
 * names; 34 now, most of them libbpf's own at each object load. Under
 * ASan a start took 3.5 s, 2.8 now; a plain start's 1.2 s did not
 * move. */
#define BTF_ANSWERS 128

static struct btf_answer {
	char *name;
	__u32 kind;
	int id; /* btf__find_by_name_kind's: > 0 found */
} btf_answers[BTF_ANSWERS];
static int nbtf_answers;

/* name's type id of kind in the kernel's BTF; <= 0 when it has none
 * (or there is no BTF). */
static int kernel_btf_id(const char *name, __u32 kind)
{
	const struct btf *btf;
	int i, id;

	for (i = 0; i < nbtf_answers; i++)
		if (btf_answers[i].kind == kind &&
		    !strcmp(btf_answers[i].name, name))
			return btf_answers[i].id;
	btf = probe__kernel_btf();
	id = btf ? btf__find_by_name_kind(btf, name, kind) : -ENOENT;
	if (btf && nbtf_answers < BTF_ANSWERS) {
		btf_answers[nbtf_answers].name = strdup(name);
		if (btf_answers[nbtf_answers].name) {
			btf_answers[nbtf_answers].kind = kind;
			btf_answers[nbtf_answers++].id = id;
		}
	}
	return id;
}

static bool btf_has(const char *prefix, const char *name, __u32 kind)
{
	char full[256];

	snprintf(full, sizeof(full), "%s%s", prefix, name);
	return kernel_btf_id(full, kind) > 0;
}

static bool tracefs_event(const char *category_event)
{
	char path[512];

	snprintf(path, sizeof(path), TRACEFS "/events/%s/id", category_event);
	return access(path, F_OK) == 0;
}

/* KMOND_PROBE_DENY="entry,entry...": candidates named by an entry count as
 * absent, so tests can run the fallbacks this kernel would not pick. An
 * entry is a target ("sock_recv_length", "sock/sock_recv_length": every
 * method on it), method:target ("tp_btf:sched_switch": that one only), a
 * method ("iter": every iterator) or a program ("tcp_fork_tp"). */
static bool listed(const char *var, const char *entry)
{
	const char *list = getenv(var), *p;
	size_t n = strlen(entry);

	for (p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
		if (strncmp(p, entry, n) == 0 && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* Whether c is named in the list the environment variable var holds. */
static bool env_lists(const char *var, const struct attach_candidate *c)
{
	char entry[160];

	snprintf(entry, sizeof(entry), "%s:%s", attach_kind_name(c->kind),
		 c->target);
	return listed(var, c->target) || listed(var, entry) ||
	       listed(var, attach_kind_name(c->kind)) ||
	       (c->prog && listed(var, c->prog));
}

static bool denied(const struct attach_candidate *c)
{
	return env_lists("KMOND_PROBE_DENY", c);
}

/* --- candidates that passed probing but failed to load --- */

/* A kernel can have the event and still refuse the program (5.11-5.15 have
 * tp_btf sched_switch but no task storage for tracing programs): such a
 * candidate is unavailable for the rest of the run, so starting its
 * collector again picks the next one. */
#define MAX_REFUSED 32

static struct {
	const struct attach_candidate *cand;
	char why[160]; /* whole: "PROG failed to load: ..." */
} refused[MAX_REFUSED];
static int nrefused;

/* The program libbpf last said it failed to load, and why. */
static char failed_prog[64], failed_why[96];

static bool load_refused(const struct attach_candidate *c, char *why,
			 size_t whylen)
{
	for (int i = 0; i < nrefused; i++)
		if (refused[i].cand == c) {
			snprintf(why, whylen, "%s", refused[i].why);
			return true;
		}
	return false;
}

bool probe__refuse(const struct attach_candidate *c, const char *why)
{
	char had[8];

	if (load_refused(c, had, sizeof(had)))
		return true;
	if (nrefused == MAX_REFUSED)
		return false;
	refused[nrefused].cand = c;
	snprintf(refused[nrefused].why, sizeof(refused[nrefused].why), "%s",
		 why);
	nrefused++;
	return true;
}

void probe__libbpf_message(const char *fmt, va_list ap)
{
	char msg[256], name[sizeof(failed_prog)], why[sizeof(failed_why)];
	const char *at;
	va_list copy;

	va_copy(copy, ap);
	vsnprintf(msg, sizeof(msg), fmt, copy);
	va_end(copy);
	/* libbpf names the program only in its warning:
	 * "libbpf: prog 'NAME': failed to load: -22" (1.1; "-EINVAL" later). */
	at = strstr(msg, "prog '");
	if (at && sscanf(at, "prog '%63[^']': failed to load: %95[^\n]", name,
			 why) == 2) {
		int err;

		snprintf(failed_prog, sizeof(failed_prog), "%s", name);
		/* libbpf 1.1 gives the number ("-22") */
		if (sscanf(why, "-%d", &err) == 1)
			snprintf(why, sizeof(why), "%s", strerror(err));
		snprintf(failed_why, sizeof(failed_why), "%s", why);
	}
}

static void warn_off(const char *collector, const struct hook *hook);

bool probe__refuse_failed(const char *collector, const struct hook *hooks,
			  int nhooks)
{
	char why[sizeof(refused[0].why)];

	for (int h = 0; h < nhooks && failed_prog[0]; h++)
		for (int i = 0; i < hooks[h].ncands; i++) {
			const struct attach_candidate *c = &hooks[h].cands[i];

			/* candidates may share a program: the one refused
			 * already is not the one that failed now */
			if (!c->prog || strcmp(c->prog, failed_prog) ||
			    load_refused(c, why, sizeof(why)))
				continue;
			snprintf(why, sizeof(why), "%s failed to load: %s",
				 c->prog, failed_why);
			if (!probe__refuse(c, why))
				break; /* no room to remember it */
			failed_prog[0] = '\0';
			if (!hooks[h].optional) {
				log_warn("%s: %s: %s %s failed to load (%s); "
					 "trying the next method",
					 collector, hooks[h].name,
					 attach_kind_name(c->kind), c->target,
					 failed_why);
				return true;
			}
			log_debug("%s: %s: %s %s failed (%s); trying the next "
				  "method",
				  collector, hooks[h].name,
				  attach_kind_name(c->kind), c->target,
				  failed_why);
			if (probe__choose(&hooks[h]) < 0)
				warn_off(collector, &hooks[h]);
			return true;
		}
	failed_prog[0] = '\0';
	return false;
}

/* KMOND_PROBE_FAIL_LOAD (tests only; entries as in KMOND_PROBE_DENY): the
 * kernel is made to refuse these candidates' programs at load, as an older
 * or a locked-down kernel would, by a program flag no kernel knows
 * (EINVAL before the verifier runs, as a policy's EPERM comes). */
#define FLAG_NO_KERNEL_KNOWS (1U << 31)

static __u32 fail_load_flags(const struct attach_candidate *c)
{
	return env_lists("KMOND_PROBE_FAIL_LOAD", c) ? FLAG_NO_KERNEL_KNOWS : 0;
}

void probe__fail_load_if_asked(struct bpf_program *prog,
			       const struct attach_candidate *c)
{
	bpf_program__set_flags(prog,
			       bpf_program__flags(prog) | fail_load_flags(c));
}

/* Trampolines (fentry/fexit/LSM) and iterators can be refused with their
 * targets in BTF, as on our kernels (EPERM): try a two-instruction
 * program on the target. fentry is attached too; an iterator is only
 * loaded (its link wants the object it walks). */
static int try_tracing(const struct attach_candidate *c, const char *func,
		       enum bpf_attach_type type)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 }, /* r0 = 0 */
		{ .code = 0x95 }, /* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type,
		    .prog_flags = fail_load_flags(c));
	int id, prog_fd, link_fd, err = 0;

	id = kernel_btf_id(func, BTF_KIND_FUNC);
	if (id <= 0)
		return -ENOENT;
	opts.attach_btf_id = id;
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "kmond_probe", "GPL",
				insns, 2, &opts);
	if (prog_fd < 0)
		return -errno;
	if (type == BPF_TRACE_FENTRY) {
		link_fd = bpf_raw_tracepoint_open(NULL, prog_fd);
		if (link_fd < 0)
			err = -errno;
		else
			close(link_fd);
	}
	close(prog_fd);
	return err;
}

/* uprobe_multi links (6.6): a two-instruction program for them, linked
 * to "/" (not a file: EBADF where the kernel has them, EINVAL before),
 * as libbpf probes them. Once a run. */
static int try_uprobe_multi(const struct attach_candidate *c)
{
	static int answer = 1; /* 1: not asked yet */
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 }, /* r0 = 0 */
		{ .code = 0x95 }, /* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = KMON_TRACE_UPROBE_MULTI,
		    .prog_flags = fail_load_flags(c));
	uint64_t offset = 0;
	int prog_fd, link_fd;

	if (answer != 1)
		return answer;
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "kmond_probe", "GPL",
				insns, 2, &opts);
	if (prog_fd < 0)
		return answer = -errno;
	link_fd = uprobe_multi_link(prog_fd, "/", &offset, 1, 0, 0);
	answer = link_fd < 0 && errno == EBADF ? 0 : -EOPNOTSUPP;
	if (link_fd >= 0)
		close(link_fd);
	close(prog_fd);
	return answer;
}

/* An iterator's answer, probed once a run per target: a few targets. */
#define MAX_ITERS 8
static struct {
	const char *target;
	int err;
} iters[MAX_ITERS];

static int try_iter(const struct attach_candidate *c)
{
	char func[128];
	int i;

	for (i = 0; i < MAX_ITERS && iters[i].target; i++)
		if (!strcmp(iters[i].target, c->target))
			return iters[i].err;
	snprintf(func, sizeof(func), "bpf_iter_%s", c->target);
	if (i == MAX_ITERS)
		return try_tracing(c, func, BPF_TRACE_ITER);
	iters[i].target = c->target;
	iters[i].err = try_tracing(c, func, BPF_TRACE_ITER);
	return iters[i].err;
}

bool probe__available(const struct attach_candidate *c, char *why,
		      size_t whylen)
{
	int err;

	if (denied(c)) {
		snprintf(why, whylen, "%s denied by KMOND_PROBE_DENY",
			 c->target);
		return false;
	}
	if (load_refused(c, why, whylen))
		return false;
	switch (c->kind) {
	case ATTACH_TP_BTF:
		if (btf_has("btf_trace_", c->target, BTF_KIND_TYPEDEF))
			return true;
		snprintf(why, whylen, "no BTF for tracepoint %s", c->target);
		return false;
	case ATTACH_RAW_TP:
		if (btf_has("btf_trace_", c->target, BTF_KIND_TYPEDEF))
			return true;
		snprintf(why, whylen, "no raw tracepoint %s", c->target);
		return false;
	case ATTACH_TRACEPOINT:
		if (tracefs_event(c->target))
			return true;
		snprintf(why, whylen, "no tracepoint %s in " TRACEFS,
			 c->target);
		return false;
	case ATTACH_FENTRY:
		err = try_tracing(c, c->target, BPF_TRACE_FENTRY);
		if (!err)
			return true;
		snprintf(why, whylen, "fentry on %s refused: %s", c->target,
			 strerror(-err));
		return false;
	case ATTACH_ITER:
		err = try_iter(c);
		if (!err)
			return true;
		snprintf(why, whylen, "%s iterator %s: %s", c->target,
			 err == -ENOENT ? "absent" : "refused", strerror(-err));
		return false;
	case ATTACH_RUN:
	case ATTACH_CGROUP:
		return true; /* the load decides */
	case ATTACH_UPROBE:
		if (access("/sys/bus/event_source/devices/uprobe/type", F_OK) ==
		    0)
			return true; /* the load and the attach decide */
		snprintf(
			why, whylen,
			"uprobes are not available (CONFIG_UPROBE_EVENTS off)");
		return false;
	case ATTACH_UPROBE_MULTI:
		err = try_uprobe_multi(c);
		if (!err)
			return true;
		snprintf(why, whylen, "uprobe_multi links refused: %s",
			 strerror(-err));
		return false;
	case ATTACH_KPROBE:
		if (access("/sys/bus/event_source/devices/kprobe/type", F_OK) !=
		    0) {
			snprintf(
				why, whylen,
				"kprobes are not available (CONFIG_KPROBES off)");
			return false;
		}
		if (btf_has("", c->target, BTF_KIND_FUNC))
			return true;
		snprintf(why, whylen, "no kernel function %s", c->target);
		return false;
	}
	snprintf(why, whylen, "unknown attach kind");
	return false;
}

int probe__choose(const struct hook *hook)
{
	char why[256];

	for (int i = 0; i < hook->ncands; i++)
		if (probe__available(&hook->cands[i], why, sizeof(why)))
			return i;
	return -1;
}

/* Why none of an optional hook's candidates serves, for its one line. */
static void why_off(const struct hook *hook, char *why, size_t whylen)
{
	size_t n = 0;

	why[0] = '\0';
	for (int i = 0; i < hook->ncands && n < whylen; i++) {
		char one[256];

		probe__available(&hook->cands[i], one, sizeof(one));
		n += snprintf(why + n, whylen - n, "%s%s: %s", i ? "; " : "",
			      attach_kind_name(hook->cands[i].kind), one);
	}
}

/* The optional hooks already said to be off: once a run, not at every
 * start of their collector. */
#define MAX_OFF 16
static const struct hook *said_off[MAX_OFF];

static void warn_off(const char *collector, const struct hook *hook)
{
	char why[512];
	int i = 0;

	while (i < MAX_OFF && said_off[i] && said_off[i] != hook)
		i++;
	if (i < MAX_OFF && said_off[i])
		return;
	if (i < MAX_OFF)
		said_off[i] = hook;
	why_off(hook, why, sizeof(why));
	log_warn("%s: %s off (%s): %s", collector, hook->name,
		 hook->feature ? hook->feature : "not on this kernel", why);
}

int probe__select(const char *collector, struct bpf_object *obj,
		  const struct hook *hooks, int nhooks, int *chosen)
{
	int err = 0;

	for (int h = 0; h < nhooks; h++) {
		chosen[h] = probe__choose(&hooks[h]);
		if (chosen[h] < 0 && hooks[h].optional) {
			warn_off(collector, &hooks[h]);
		} else if (chosen[h] < 0) {
			log_warn(
				"%s: %s: no attach method works on this kernel",
				collector, hooks[h].name);
			err = -ENOTSUP;
		}
		for (int i = 0; i < hooks[h].ncands; i++) {
			const char *name = hooks[h].cands[i].prog;
			struct bpf_program *prog =
				bpf_object__find_program_by_name(obj, name);

			if (prog && i == chosen[h])
				probe__fail_load_if_asked(prog,
							  &hooks[h].cands[i]);
			if (prog)
				bpf_program__set_autoload(prog, i == chosen[h]);
			else if (name)
				log_warn("BPF program %s is missing", name);
		}
		if (chosen[h] >= 0)
			log_debug("%s: %s: attach with %s %s", collector,
				  hooks[h].name,
				  attach_kind_name(
					  hooks[h].cands[chosen[h]].kind),
				  hooks[h].cands[chosen[h]].target);
	}
	/* The skeleton load that follows parses the kernel's BTF itself:
	 * holding this copy through it made kmond's peak RSS two copies
	 * (about 10 MiB) higher. The next probe parses it again. */
	probe__release();
	return err;
}

uint64_t probe__features_off(const struct hook *hooks, int nhooks)
{
	uint64_t off = 0;

	for (int h = 0; h < nhooks && h < 64; h++)
		if (hooks[h].optional && probe__choose(&hooks[h]) < 0)
			off |= 1ULL << h;
	probe__release();
	return off;
}

void probe__note_failure(const char *prog, int err)
{
	snprintf(failed_prog, sizeof(failed_prog), "%s", prog);
	snprintf(failed_why, sizeof(failed_why), "%s", strerror(-err));
}

/* --- libbpf's warnings while a collector starts --- */

#define MAX_HELD 32
static char *held[MAX_HELD];
static int nheld;
static bool holding;

bool probe__hold_warning(const char *fmt, va_list ap)
{
	char line[512];
	va_list copy;

	if (!holding)
		return false;
	if (nheld == MAX_HELD) /* the first ones say what failed */
		return true;
	va_copy(copy, ap);
	vsnprintf(line, sizeof(line), fmt, copy);
	va_end(copy);
	held[nheld] = strdup(line);
	nheld += held[nheld] != NULL;
	return true;
}

static void end_hold(bool show)
{
	for (int i = 0; i < nheld; i++) {
		if (show) /* most say "libbpf: " themselves */
			fprintf(stderr, "kmond: %s%s",
				strncmp(held[i], "libbpf: ", 8) ? "libbpf: " :
								  "",
				held[i]);
		free(held[i]);
	}
	nheld = 0;
	holding = false;
}

int probe__start(const char *who, const struct hook *hooks, int nhooks,
		 int (*start)(void *ctx), void (*undo)(void *ctx), void *ctx)
{
	int err;

	failed_prog[0] = '\0';
	holding = true;
	while ((err = start(ctx)) && probe__refuse_failed(who, hooks, nhooks))
		undo(ctx);
	end_hold(err != 0);
	return err;
}

/* The hooks whose choice a collector left unloaded, and why: a few
 * hooks, each of which keeps its slot. */
#define MAX_UNLOADED 8
static const struct hook *unloaded_hook[MAX_UNLOADED];
static const char *unloaded_reason[MAX_UNLOADED];

void probe__set_unloaded(const struct hook *hook, const char *why)
{
	int i = 0;

	while (i < MAX_UNLOADED && unloaded_hook[i] && unloaded_hook[i] != hook)
		i++;
	if (i == MAX_UNLOADED)
		return;
	unloaded_hook[i] = hook;
	unloaded_reason[i] = why;
}

static const char *unloaded_why(const struct hook *hook)
{
	for (int i = 0; i < MAX_UNLOADED && unloaded_hook[i]; i++)
		if (unloaded_hook[i] == hook)
			return unloaded_reason[i];
	return NULL;
}

void probe__describe(const char *collector, const struct hook *hooks,
		     int nhooks)
{
	for (int h = 0; h < nhooks; h++) {
		const struct hook *hook = &hooks[h];
		int chosen = probe__choose(hook);
		const char *why_not = chosen >= 0 ? unloaded_why(hook) : NULL;

		printf("%-10s %-14s ", collector, hook->name);
		if (why_not)
			printf("none loaded (%s %s: %s)",
			       attach_kind_name(hook->cands[chosen].kind),
			       hook->cands[chosen].target, why_not);
		else if (chosen >= 0)
			printf("%s %s",
			       attach_kind_name(hook->cands[chosen].kind),
			       hook->cands[chosen].target);
		else if (hook->optional)
			printf("off (%s)",
			       hook->feature ? hook->feature : "optional");
		else
			printf("unavailable");
		for (int i = 0; i < hook->ncands; i++) {
			char why[256];

			if (i == chosen)
				continue;
			if (i > chosen && chosen >= 0) {
				printf("; fallback %s",
				       attach_kind_name(hook->cands[i].kind));
				continue;
			}
			if (!probe__available(&hook->cands[i], why,
					      sizeof(why)))
				printf("; %s: %s",
				       attach_kind_name(hook->cands[i].kind),
				       why);
		}
		if (hook->optional && chosen >= 0 && !why_not)
			printf("; on");
		printf("\n");
	}
}
