// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: plays the bio collector's raw_tp programs a request's
 * life, event by event, in the context each event runs in, with
 * BPF_PROG_TEST_RUN, and checks to whom the I/O is counted. Two processes
 * play the tasks: "mine", which the filter selects (a service), and
 * "other", which it does not (another writer, or kblockd's kworker). A
 * fake request address (a user address the programs cannot read: op read,
 * no disk) is the request.
 *   kmt_bio_replay dispatch   with block_io_start: blk-mq issues queued
 *       requests from whichever task runs the queue, so one task's request
 *       is issued (and completed) in another's context: each I/O counts
 *       for the task that started it, never for the one that issued it.
 *       A request completed with data whose issue was not seen is lost;
 *       one completed without data, or failed, before its issue is not.
 *   kmt_bio_replay requeue    without block_io_start (6.1): a request
 *       requeued by its driver and inserted again by kblockd's requeue
 *       work (a kworker, selected or not) stays its submitter's I/O; one
 *       requeued to the dispatch list and issued again is no requeue at
 *       its pointer's next use. A request issued straight (no insert),
 *       its completion skipped, then issued again: the first use is lost,
 *       the second counts.
 * Prints "ok: ..." per check; exits 1 when one fails. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bio.skel.h"
#include "bpf/bio.h"
#include "bpf/filter.h"

#define MIB (1 << 20)

enum event { START, INSERT, ISSUE, REQUEUE, COMPLETE, NR_EVENTS };
enum task { MINE, OTHER, NR_TASKS };

static const char *const prog_names[NR_EVENTS] = {
	"bio_start_raw",   "bio_insert_raw",   "bio_issue_raw",
	"bio_requeue_raw", "bio_complete_raw",
};

static struct bio_bpf *skel;
static int prog_fd[NR_EVENTS] = { -1, -1, -1, -1, -1 };
static int to_task[NR_TASKS], from_task[NR_TASKS];
static pid_t task_pid[NR_TASKS];
static int failed;

struct order {
	int event;
	__u64 args[3]; /* the tracepoint's: request, error, bytes */
};

/* A task runs the programs it is told to, in its own context. */
static void task_loop(int in, int out)
{
	struct order o;
	int rc;

	while (read(in, &o, sizeof(o)) == sizeof(o)) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = o.args,
			    .ctx_size_in = sizeof(o.args));

		rc = prog_fd[o.event] < 0 ?
			     0 :
			     bpf_prog_test_run_opts(prog_fd[o.event], &opts);
		if (write(out, &rc, sizeof(rc)) != sizeof(rc))
			break;
	}
	_exit(0);
}

static void start_tasks(void)
{
	for (int t = 0; t < NR_TASKS; t++) {
		int down[2], up[2];

		if (pipe(down) || pipe(up)) {
			perror("pipe");
			exit(1);
		}
		task_pid[t] = fork();
		if (task_pid[t] == 0) {
			/* Only its own ends: a closed order pipe ends it. */
			for (int o = 0; o < t; o++) {
				close(to_task[o]);
				close(from_task[o]);
			}
			close(down[1]);
			close(up[0]);
			task_loop(down[0], up[1]);
		}
		to_task[t] = down[1];
		from_task[t] = up[0];
		close(down[0]);
		close(up[1]);
	}
}

static void stop_tasks(void)
{
	for (int t = 0; t < NR_TASKS; t++) {
		close(to_task[t]);
		waitpid(task_pid[t], NULL, 0);
	}
}

/* o's event in task t's context. */
static void run(int t, struct order o)
{
	int rc = -1;

	if (write(to_task[t], &o, sizeof(o)) != sizeof(o) ||
	    read(from_task[t], &rc, sizeof(rc)) != sizeof(rc) || rc) {
		fprintf(stderr, "running %s failed: %d\n", prog_names[o.event],
			rc);
		exit(1);
	}
}

/* event on request rq in task t's context (bytes: a completion's). */
static void play(int t, int event, __u64 rq, __u64 bytes)
{
	run(t, (struct order){ event, { rq, 0, bytes } });
}

/* Only mine is selected, or (all) every process is. */
static void select_tasks(int all)
{
	struct kmon_ctl ctl = { .all_processes = all };
	struct kmon_svc svc = { .id = 1 };
	__u32 zero = 0, tgid = task_pid[MINE];

	__u64 gen;
	int gen_fd = bpf_map__fd(skel->maps.pid_service_gen);

	bpf_map_update_elem(bpf_map__fd(skel->maps.kmon_ctl), &zero, &ctl, 0);
	bpf_map_update_elem(bpf_map__fd(skel->maps.pid_service), &tgid, &svc,
			    0);
	/* as the provider does: answers kept per CPU (kmon_tgid_seen) are
	 * looked up again */
	if (bpf_map_lookup_elem(gen_fd, &zero, &gen) == 0) {
		gen++;
		bpf_map_update_elem(gen_fd, &zero, &gen, 0);
	}
}

/* The counter what of task t's I/Os: summed over CPUs and buckets. */
static __u64 counted(int t, int what)
{
	int fd = bpf_map__fd(skel->maps.bio_counts), ncpus;
	struct bio_key key, next, *prev = NULL;
	__u64 sum = 0, *vals;

	ncpus = libbpf_num_possible_cpus();
	vals = calloc(ncpus, sizeof(*vals));
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.pid != (__u32)task_pid[t] || key.what != what ||
		    bpf_map_lookup_elem(fd, &key, vals))
			continue;
		for (int c = 0; c < ncpus; c++)
			sum += vals[c];
	}
	free(vals);
	return sum;
}

/* bio_stats' counter stat, summed over CPUs. */
static __u64 stat_of(__u32 stat)
{
	int fd = bpf_map__fd(skel->maps.bio_stats), ncpus;
	__u64 sum = 0, *vals;

	ncpus = libbpf_num_possible_cpus();
	vals = calloc(ncpus, sizeof(*vals));
	if (!bpf_map_lookup_elem(fd, &stat, vals))
		for (int c = 0; c < ncpus; c++)
			sum += vals[c];
	free(vals);
	return sum;
}

static __u64 lost(void)
{
	return stat_of(BIO_COMPLETION_LOST);
}

static void expect(const char *what, __u64 got, __u64 want)
{
	printf("%s: %s: got %llu, want %llu\n", got == want ? "ok" : "FAIL",
	       what, (unsigned long long)got, (unsigned long long)want);
	failed |= got != want;
}

static void expect_mine(const char *when, __u64 ios, __u64 bytes,
			__u64 lost_ios)
{
	char what[160];

	snprintf(what, sizeof(what), "%s: my I/Os", when);
	expect(what, counted(MINE, BIO_LATENCY), ios);
	snprintf(what, sizeof(what), "%s: my bytes", when);
	expect(what, counted(MINE, BIO_BYTES), bytes);
	snprintf(what, sizeof(what), "%s: the other task's I/Os", when);
	expect(what, counted(OTHER, BIO_LATENCY), 0);
	snprintf(what, sizeof(what), "%s: I/Os lost", when);
	expect(what, lost(), lost_ios);
}

static void dispatch(void)
{
	select_tasks(0);
	/* The other writer's request, issued and completed in mine. */
	play(OTHER, START, 0x1000, 0);
	play(OTHER, INSERT, 0x1000, 0);
	play(MINE, ISSUE, 0x1000, 0);
	play(MINE, COMPLETE, 0x1000, MIB);
	expect_mine("another's request issued by me", 0, 0, 0);
	/* Mine, issued and completed in the other's. */
	play(MINE, START, 0x2000, 0);
	play(MINE, INSERT, 0x2000, 0);
	play(OTHER, ISSUE, 0x2000, 0);
	play(OTHER, COMPLETE, 0x2000, MIB);
	expect_mine("my request issued by another", 1, MIB, 0);
	/* Completed with data, its issue unseen (the kernel skipped the
	 * program): lost, and not counted. */
	play(MINE, START, 0x6000, 0);
	play(MINE, COMPLETE, 0x6000, MIB);
	expect("completed, its issue unseen: lost", stat_of(BIO_ISSUE_LOST), 1);
	/* Never issued: a flush with nothing to flush, a request failed
	 * before (BLK_STS_IOERR). */
	play(MINE, START, 0x7000, 0);
	play(MINE, COMPLETE, 0x7000, 0);
	play(MINE, START, 0x8000, 0);
	run(MINE, (struct order){ COMPLETE, { 0x8000, 10, MIB } });
	expect("completed unissued without data, or failed: not lost",
	       stat_of(BIO_ISSUE_LOST), 1);
	expect_mine("none of them counted", 1, MIB, 0);
}

/* My request, requeued and inserted again in the other's context (a
 * kworker), then issued and completed there. */
static void requeued(__u64 rq)
{
	play(MINE, INSERT, rq, 0);
	play(MINE, ISSUE, rq, 0);
	play(OTHER, REQUEUE, rq, 0);
	play(OTHER, INSERT, rq, 0);
	play(OTHER, ISSUE, rq, 0);
	play(OTHER, COMPLETE, rq, MIB);
}

static void requeue(void)
{
	select_tasks(0);
	requeued(0x3000);
	expect_mine("requeued, inserted again by a kworker nobody selects", 1,
		    MIB, 0);
	select_tasks(1);
	requeued(0x4000);
	expect_mine("requeued, inserted again by a selected kworker", 2,
		    2 * MIB, 0);
	/* Requeued to the dispatch list, issued again, its completion
	 * never seen: at its next use the request is a new one (of the
	 * other task, with every process selected), mine is lost. */
	play(MINE, INSERT, 0x5000, 0);
	play(MINE, ISSUE, 0x5000, 0);
	play(OTHER, REQUEUE, 0x5000, 0);
	play(OTHER, ISSUE, 0x5000, 0);
	play(OTHER, INSERT, 0x5000, 0);
	expect("requeued, issued again, used again: my I/O lost", lost(), 1);
	/* Issued straight from the submitter (no insert), its completion
	 * skipped, used again the same way. */
	play(MINE, ISSUE, 0x9000, 0);
	play(MINE, ISSUE, 0x9000, 0);
	expect("issued straight, used again: the first use lost", lost(), 2);
	play(MINE, COMPLETE, 0x9000, MIB);
	expect_mine("issued straight, used again: the second counts", 3,
		    3 * MIB, 2);
}

int main(int argc, char **argv)
{
	struct bpf_program *prog;
	int with_start;

	if (argc != 2 ||
	    (strcmp(argv[1], "dispatch") && strcmp(argv[1], "requeue"))) {
		fprintf(stderr, "usage: %s dispatch|requeue\n", argv[0]);
		return 2;
	}
	with_start = !strcmp(argv[1], "dispatch");
	skel = bio_bpf__open();
	if (!skel) {
		perror("bio_bpf__open");
		return 1;
	}
	skel->rodata->have_io_start = with_start;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, false);
	for (int e = 0; e < NR_EVENTS; e++) {
		prog = bpf_object__find_program_by_name(skel->obj,
							prog_names[e]);
		if (prog)
			bpf_program__set_autoload(prog, true);
		else
			printf("note: no program %s\n", prog_names[e]);
	}
	if (bio_bpf__load(skel)) {
		perror("bio_bpf__load");
		return 1;
	}
	for (int e = 0; e < NR_EVENTS; e++) {
		prog = bpf_object__find_program_by_name(skel->obj,
							prog_names[e]);
		prog_fd[e] = prog ? bpf_program__fd(prog) : -1;
	}
	start_tasks();
	if (with_start)
		dispatch();
	else
		requeue();
	stop_tasks();
	bio_bpf__destroy(skel);
	return failed;
}
