// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A two-tier tandem of single-server FIFO queues, in separate processes,
 * and its open-loop Poisson client: the workload of the occupancy
 * evaluation (issue 17).
 *
 *   tandem tier2  --port P --mean-us M --seed S [--spans FILE]
 *   tandem tier1  --port P --next P2 --mean-us M --seed S [--spans FILE]
 *   tandem client --port P --rate R --count N --seed S
 *   tandem tier1|tier2 ... --dist fixed|lognormal   other service laws
 *   tandem tier1 ... --threads 1     a thread-per-connection front
 *   tandem client ... --per-request 1  a new connection per request
 *
 * Each tier has one server thread taking requests in order of arrival:
 * it holds each for an exponential service time (a sleep, then a short
 * spin to the exact end, so the 2 cores are not the bottleneck and the
 * service time is what was drawn), then tier 1 hands the request to tier
 * 2 and goes on; tier 2 answers, and tier 1 passes the answer back to
 * the client. A connection carries one request at a time (the client and
 * tier 1 open more as they need them), so kmond's request model, one
 * request then its response per connection, sees every request; each
 * connection has its own reader thread, so a request's first byte is read
 * as it arrives. Messages are 16 bytes: a request id and a return path.
 *
 * --threads 1 makes tier 1 another shape (issue 44): each connection's
 * thread serves its own requests at once, side by side (no queue), then
 * forwards each over one persistent connection to tier 2, held from the
 * request written to its answer read. Its service spans then overlap;
 * its busy clock is the time at least one is served. --handoff-us M
 * adds a hand-off of random length (exponential, mean M us) between a
 * request's service and its forwarding, in no tier.
 *
 * --spans: a line "ARRIVED START SERVED DONE" (monotonic ns) per
 * request: read in, service begun, service over, handed on; the truth of
 * the tier's utilization (START..SERVED) and of the time it holds
 * requests (ARRIVED..DONE, what kmond can see) over any stretch of time. The client prints
 * the number of requests answered. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/hash.h"

struct msg {
	uint64_t id;
	uint64_t back; /* tier 1: the client's fd the answer goes to */
};

static uint64_t rng_state;
static pthread_mutex_t rng_lock = PTHREAD_MUTEX_INITIALIZER;

static double rng_exp(double mean)
{
	uint64_t z;

	pthread_mutex_lock(&rng_lock);
	z = splitmix64_next(&rng_state);
	pthread_mutex_unlock(&rng_lock);

	return -log(((z >> 11) + 1) * 0x1.0p-53) * mean;
}

/* --dist: the law of the service times, of the given mean: exponential
 * (the model's), fixed, or lognormal of sigma 1 (a CV of 1.31). */
enum dist { EXPONENTIAL, FIXED, LOGNORMAL };
static enum dist service_dist;

static double rng_service(double mean)
{
	double u, v;

	switch (service_dist) {
	case FIXED:
		return mean;
	case LOGNORMAL:
		/* exp(N(-1/2, 1)) has a mean of 1 */
		u = rng_exp(1) + 1e-300;
		v = rng_exp(1);
		u = sqrt(2 * u) * cos(2 * M_PI * (1 - exp(-v)));
		return mean * exp(u - 0.5);
	default:
		return rng_exp(mean);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Until the monotonic time `until`: sleep to SPIN_NS before, then spin,
 * since a wakeup comes late by tens of microseconds (with real-time
 * priority and a timer slack of 1 ns, measured on a shared 2-core VM at
 * load 3: 26 us at the median, 84 at the 99th percentile). The spin is
 * what a tier costs in CPU: 100 us a service, not the service. */
#define SPIN_NS 100000

static void wait_until(uint64_t until)
{
	struct timespec ts;
	uint64_t early = until > SPIN_NS ? until - SPIN_NS : 0;

	if (now_ns() < early) {
		ts.tv_sec = early / 1000000000ULL;
		ts.tv_nsec = early % 1000000000ULL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
	}
	while (now_ns() < until)
		;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int read_msg(int fd, struct msg *m)
{
	size_t got = 0;

	while (got < sizeof(*m)) {
		ssize_t n = read(fd, (char *)m + got, sizeof(*m) - got);

		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

static void write_msg(int fd, const struct msg *m)
{
	if (write(fd, m, sizeof(*m)) != sizeof(*m))
		die("write");
}

static int listen_on(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (void *)&a, sizeof(a)) || listen(fd, 1024))
		die("listen");
	return fd;
}

static int connect_to(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0 || connect(fd, (void *)&a, sizeof(a)))
		die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* --- a tier: FIFO of requests, one server thread --- */

struct job {
	int fd; /* where it came from */
	struct msg m;
	uint64_t arrived;
};

#define QUEUE_MAX 65536

static struct job queue[QUEUE_MAX];
static unsigned long q_head, q_tail;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;

static void push(int fd, const struct msg *m)
{
	pthread_mutex_lock(&q_lock);
	if (q_tail - q_head == QUEUE_MAX) {
		fprintf(stderr, "tandem: queue full\n");
		exit(1);
	}
	queue[q_tail % QUEUE_MAX] = (struct job){ fd, *m, now_ns() };
	q_tail++;
	pthread_cond_signal(&q_cond);
	pthread_mutex_unlock(&q_lock);
}

static struct job pop(void)
{
	struct job j;

	pthread_mutex_lock(&q_lock);
	while (q_head == q_tail)
		pthread_cond_wait(&q_cond, &q_lock);
	j = queue[q_head % QUEUE_MAX];
	q_head++;
	pthread_mutex_unlock(&q_lock);
	return j;
}

/* --threads: the front's own settings */
static int threads_mode, persistent_fd = -1, next_port;
static double front_mean_ns, handoff_mean_ns;
static FILE *front_spans;
static pthread_mutex_t persistent_lock = PTHREAD_MUTEX_INITIALIZER;

static void log_span(FILE *spans, uint64_t arrived, uint64_t start,
		     uint64_t served)
{
	if (!spans)
		return;
	flockfile(spans);
	fprintf(spans, "%llu %llu %llu %llu\n", (unsigned long long)arrived,
		(unsigned long long)start, (unsigned long long)served,
		(unsigned long long)now_ns());
	fflush(spans);
	funlockfile(spans);
}

/* A thread-per-connection front's request: served at once, then through
 * tier 2 over the one persistent connection, then answered. */
static void serve_in_thread(int fd, struct msg *m)
{
	uint64_t arrived = now_ns(), start = arrived, served;

	wait_until(start + (uint64_t)rng_service(front_mean_ns));
	served = now_ns();
	if (handoff_mean_ns > 0)
		wait_until(served + (uint64_t)rng_exp(handoff_mean_ns));
	pthread_mutex_lock(&persistent_lock);
	/* made at the first request: after the monitor has started, which
	 * counts requests on the connections it saw begin */
	if (persistent_fd < 0)
		persistent_fd = connect_to(next_port);
	write_msg(persistent_fd, m);
	if (read_msg(persistent_fd, m))
		die("tier 2 closed");
	pthread_mutex_unlock(&persistent_lock);
	log_span(front_spans, arrived, start, served);
	write_msg(fd, m);
}

static void *reader(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct msg m;
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while (read_msg(fd, &m) == 0) {
		if (threads_mode)
			serve_in_thread(fd, &m);
		else
			push(fd, &m);
	}
	close(fd);
	return NULL;
}

static void *acceptor(void *arg)
{
	int lfd = (int)(intptr_t)arg;
	pthread_t t;

	for (;;) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			continue;
		if (pthread_create(&t, NULL, reader, (void *)(intptr_t)fd))
			die("pthread_create");
		pthread_detach(t);
	}
	return NULL;
}

/* --- tier 1's connections to tier 2: one request at a time each --- */

#define POOL_MAX 4096

static int pool_fd[POOL_MAX], pool_busy[POOL_MAX], pool_n;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static void *answers(void *arg)
{
	int slot = (int)(intptr_t)arg;
	struct msg m;

	while (read_msg(pool_fd[slot], &m) == 0) {
		pthread_mutex_lock(&pool_lock);
		pool_busy[slot] = 0;
		pthread_mutex_unlock(&pool_lock);
		write_msg((int)m.back, &m);
	}
	return NULL;
}

static int pool_take(void)
{
	pthread_t t;
	int slot;

	pthread_mutex_lock(&pool_lock);
	for (slot = 0; slot < pool_n && pool_busy[slot]; slot++)
		;
	if (slot == pool_n) {
		if (pool_n == POOL_MAX)
			die("pool");
		pool_fd[pool_n++] = connect_to(next_port);
		if (pthread_create(&t, NULL, answers, (void *)(intptr_t)slot))
			die("pthread_create");
		pthread_detach(t);
	}
	pool_busy[slot] = 1;
	pthread_mutex_unlock(&pool_lock);
	return pool_fd[slot];
}

static void tier(int port, int next, double mean_ns, FILE *spans)
{
	uint64_t start, end, served;
	pthread_t t;
	struct job j;

	if (threads_mode) {
		front_mean_ns = mean_ns;
		front_spans = spans;
		next_port = next;
		acceptor((void *)(intptr_t)listen_on(port));
	}
	if (pthread_create(&t, NULL, acceptor,
			   (void *)(intptr_t)listen_on(port)))
		die("pthread_create");
	next_port = next;
	for (;;) {
		j = pop();
		start = now_ns();
		end = start + (uint64_t)rng_service(mean_ns);
		wait_until(end);
		served = now_ns();
		if (next) {
			j.m.back = (uint64_t)j.fd;
			write_msg(pool_take(), &j.m);
		} else {
			write_msg(j.fd, &j.m);
		}
		log_span(spans, j.arrived, start, served);
	}
}

/* --- the client --- */

static int c_fd[POOL_MAX], c_busy[POOL_MAX], c_n, c_port;
static unsigned long answered;
static pthread_mutex_t c_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c_cond = PTHREAD_COND_INITIALIZER;

static void *client_reader(void *arg)
{
	int slot = (int)(intptr_t)arg;
	struct msg m;

	while (read_msg(c_fd[slot], &m) == 0) {
		pthread_mutex_lock(&c_lock);
		c_busy[slot] = 0;
		answered++;
		pthread_cond_signal(&c_cond);
		pthread_mutex_unlock(&c_lock);
	}
	return NULL;
}

/* --per-request: each request on a connection of its own, closed after
 * its answer, by a thread of its own (open loop). */
static int per_request;

static void *one_request(void *arg)
{
	struct msg m = { .id = (uint64_t)(uintptr_t)arg };
	int fd = connect_to(c_port);

	write_msg(fd, &m);
	if (read_msg(fd, &m))
		die("no answer");
	close(fd);
	pthread_mutex_lock(&c_lock);
	answered++;
	pthread_cond_signal(&c_cond);
	pthread_mutex_unlock(&c_lock);
	return NULL;
}

static void client(int port, double rate, unsigned long count)
{
	uint64_t at = now_ns();
	pthread_t t;
	int slot;

	for (unsigned long i = 0; i < count; i++) {
		struct msg m = { .id = i };

		at += (uint64_t)rng_exp(1e9 / rate);
		wait_until(at);
		if (per_request) {
			c_port = port;
			if (pthread_create(&t, NULL, one_request,
					   (void *)(uintptr_t)i))
				die("pthread_create");
			pthread_detach(t);
			continue;
		}
		pthread_mutex_lock(&c_lock);
		for (slot = 0; slot < c_n && c_busy[slot]; slot++)
			;
		if (slot == c_n) {
			if (c_n == POOL_MAX)
				die("client pool");
			c_fd[c_n++] = connect_to(port);
			if (pthread_create(&t, NULL, client_reader,
					   (void *)(intptr_t)slot))
				die("pthread_create");
			pthread_detach(t);
		}
		c_busy[slot] = 1;
		pthread_mutex_unlock(&c_lock);
		write_msg(c_fd[slot], &m);
	}
	pthread_mutex_lock(&c_lock);
	while (answered < count)
		pthread_cond_wait(&c_cond, &c_lock);
	pthread_mutex_unlock(&c_lock);
	printf("%lu\n", answered);
}

int main(int argc, char **argv)
{
	int port = 0, next = 0;
	double mean_us = 0, rate = 0;
	unsigned long count = 0;
	FILE *spans = NULL;

	if (argc < 2)
		goto usage;
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--port"))
			port = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--next"))
			next = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--mean-us"))
			mean_us = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--rate"))
			rate = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--threads"))
			threads_mode = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--dist"))
			service_dist =
				!strcmp(argv[i + 1], "fixed")	  ? FIXED :
				!strcmp(argv[i + 1], "lognormal") ? LOGNORMAL :
								    EXPONENTIAL;
		else if (!strcmp(argv[i], "--handoff-us"))
			handoff_mean_ns = atof(argv[i + 1]) * 1000;
		else if (!strcmp(argv[i], "--per-request"))
			per_request = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--count"))
			count = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--spans")) {
			spans = fopen(argv[i + 1], "w");
			if (!spans)
				die(argv[i + 1]);
		} else if (!strcmp(argv[i], "--seed"))
			rng_state = strtoull(argv[i + 1], NULL, 10);
		else
			goto usage;
	}
	/* wakeups as asked, not 50 us late */
	prctl(PR_SET_TIMERSLACK, 1UL);
	/* Real-time priority (every thread inherits it): on a machine busy
	 * with other work, a thread woken by a request or by the end of its
	 * service would otherwise wait for a CPU for milliseconds (measured
	 * at load 13 on 2 cores: mean response 12 ms instead of the model's
	 * 4.5), and the tiers would not be M/M/1 queues. The threads sleep
	 * but for spins of at most 100 us, and the kernel's real-time
	 * throttling bounds them anyway. */
	if (sched_setscheduler(0, SCHED_FIFO,
			       &(struct sched_param){ .sched_priority = 10 }))
		perror("tandem: SCHED_FIFO (service times will include the "
		       "machine's scheduling delays)");
	if (!strcmp(argv[1], "tier2") && port && mean_us > 0)
		tier(port, 0, mean_us * 1000, spans);
	else if (!strcmp(argv[1], "tier1") && port && next && mean_us > 0)
		tier(port, next, mean_us * 1000, spans);
	else if (!strcmp(argv[1], "client") && port && rate > 0 && count)
		client(port, rate, count);
	else
		goto usage;
	return 0;
usage:
	fprintf(stderr,
		"usage: tandem tier2 --port P --mean-us M [--seed S] [--spans F]\n"
		"       tandem tier1 --port P --next P2 --mean-us M [--seed S] [--spans F] [--threads 1 [--handoff-us M]]\n"
		"       tandem client --port P --rate R --count N [--seed S] [--per-request 1]\n");
	return 2;
}
