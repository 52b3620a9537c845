// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: proves that the request-outcome classifier
 * (bpf/tcp/outcome.h) passes the verifier and that the kernel's answers
 * are user space's. Loads tests/helpers/outcome_verify.bpf.c (its two
 * programs classify a head in a map value and in a stack array) and runs
 * them with BPF_PROG_TEST_RUN on response heads: the server messages of
 * the fixtures in each DIR (real traffic), a few failing replies,
 * every truncation of each, and mutants (bytes changed, lengths changed,
 * other bytes past the length), under every protocol id and both sides.
 * Each answer must equal user space's outcome_classify() on the same
 * bytes. Prints the programs' verified instructions and the counts;
 * exits 1 on any difference, or when some protocol never gave a known
 * outcome or an error (a run that compared nothing proves nothing).
 *   kmt_outcome_verify DIR...  (as root; MUTANTS=N for another count) */
#include <linux/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/tcp/outcome.h"
#include "lib/hash.h"
#include "tests/helpers/outcome_verify.h"
#include "tests/unit/fixture.h"
#include "outcome_verify.skel.h"

#define MAX_SEEDS 512

struct head {
	__u8 b[OUTCOME_RESP_HEAD];
	__u32 len;
};

static struct head seeds[MAX_SEEDS];
static int nseeds;
static uint64_t rng = 41;

/* Failing replies the fixtures (mostly successes) lack. */
static const struct {
	const char *b;
	__u32 len;
} failing[] = {
	{ "HTTP/1.1 404 Not Found\r\n", 24 },
	{ "HTTP/1.1 503 Service Unavailable\r\n", 34 },
	{ "\x00\x00\x01\x01\x04\x00\x00\x00\x01\x8d", 10 },
	{ "\x00\x00\x05\x01\x04\x00\x00\x00\x01\x48\x03"
	  "503",
	  14 },
	{ "\x00\x00\x04\x01\x04\x00\x00\x00\x01\x08\x82\x6c\x02", 13 },
	{ "-WRONGTYPE Operation against a key\r\n", 36 },
	{ "E\x00\x00\x00\x2aSERROR\0C42601\0Msyntax error\0\0", 43 },
	{ "\x17\x00\x00\x01\xff\x28\x04#42000You have an", 23 },
	{ "SERVER_ERROR out of memory\r\n", 28 },
	{ "\x81\x00\x00\x00\x00\x00\x00\x04", 8 },
	{ "\x00\x1c\xc8\x7c\x81\x82\x00\x01\x00\x00\x00\x00", 12 },
	{ "\x00\x00\x00\x10\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00"
	  "\x05\xff\xff\xff\x91",
	  20 },
	{ "\x20\x02\x00\x05", 4 },
};

static void add_seed(const __u8 *b, size_t len)
{
	if (nseeds == MAX_SEEDS)
		return;
	seeds[nseeds].len = len < OUTCOME_RESP_HEAD ? len : OUTCOME_RESP_HEAD;
	memcpy(seeds[nseeds].b, b, seeds[nseeds].len);
	nseeds++;
}

/* The server messages of a fixture. */
static void read_fixture(const char *path)
{
	static struct fixture f;

	if (!fixture_load(path, &f)) {
		perror(path);
		exit(1);
	}
	for (size_t i = 0; i < f.n; i++)
		if (f.m[i].from == 'S')
			add_seed(f.m[i].b, f.m[i].caplen);
}

static void read_fixtures(const char *dir)
{
	char cmd[4096], path[4096];
	FILE *ls;

	snprintf(cmd, sizeof(cmd), "ls %s/*.txt", dir);
	ls = popen(cmd, "r");
	while (ls && fgets(path, sizeof(path), ls)) {
		path[strcspn(path, "\n")] = 0;
		read_fixture(path);
	}
	if (ls)
		pclose(ls);
}

static struct outcome_verify_bpf *skel;
static int fd_map, fd_stack;
static long cases, differ, known[PROTO_NR + 1], errors[PROTO_NR + 1];

static void run(int fd)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (bpf_prog_test_run_opts(fd, &opts)) {
		fprintf(stderr, "test run: %s\n", strerror(errno));
		exit(1);
	}
}

/* ns per classification of head h under proto, in the kernel: the
 * median of 11 rounds of TIMED_TURNS, less the empty loop's. */
#define TIMED_TURNS 200000
static double timed(__u32 proto, const char *b, __u32 len)
{
	int fd = bpf_program__fd(skel->progs.outcome_timed);
	double d[11];

	memset(skel->bss->input.resp, 0, OUTCOME_RESP_HEAD);
	memcpy(skel->bss->input.resp, b, len);
	skel->bss->input.len = len;
	skel->bss->input.proto = proto;
	skel->bss->input.side = TCP_SIDE_SERVER;
	skel->bss->input.stream = 1;
	skel->bss->turns = TIMED_TURNS;
	for (int r = 0; r < 11; r++) {
		double floor;

		skel->bss->classifying = 0;
		run(fd);
		floor = skel->bss->elapsed_ns;
		skel->bss->classifying = 1;
		run(fd);
		d[r] = (skel->bss->elapsed_ns - floor) / TIMED_TURNS;
	}
	for (int i = 1; i < 11; i++) /* insertion sort: 11 figures */
		for (int j = i; j > 0 && d[j] < d[j - 1]; j--) {
			double t = d[j];

			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	return d[5];
}

/* On failing replies above: the HTTP 404, the HTTP/2 literal 503, the
 * Redis WRONGTYPE, the PostgreSQL ErrorResponse, memcached's SERVER_ERROR. */
static void print_costs(void)
{
	printf("kernel ns per classification (median of 11 x %d): "
	       "http %.1f, http2 %.1f, redis %.1f, postgresql %.1f, "
	       "memcached %.1f\n",
	       TIMED_TURNS, timed(PROTO_HTTP, failing[0].b, failing[0].len),
	       timed(PROTO_HTTP2, failing[3].b, failing[3].len),
	       timed(PROTO_REDIS, failing[5].b, failing[5].len),
	       timed(PROTO_POSTGRESQL, failing[6].b, failing[6].len),
	       timed(PROTO_MEMCACHED, failing[8].b, failing[8].len));
}

static int same(const struct outcome *a, const struct outcome *b)
{
	return a->status == b->status && a->known == b->known &&
	       a->error == b->error && a->status_class == b->status_class &&
	       a->has_status == b->has_status;
}

/* One head under every protocol id (and one past them) and both sides;
 * the bytes past len are noise, as a reused buffer's are. */
static void check(const struct head *h)
{
	struct outcome_input *in = &skel->bss->input;

	memcpy(in->resp, h->b, OUTCOME_RESP_HEAD);
	for (__u32 i = h->len; i < OUTCOME_RESP_HEAD; i++)
		in->resp[i] = splitmix64_next(&rng);
	/* a length past the buffer must be bounded by the classifier */
	in->len = h->len == OUTCOME_RESP_HEAD && (rng & 1) ? 1000 : h->len;
	/* HTTP/2: the request's stream, the heads' (mostly 1) or another */
	in->stream = splitmix64_next(&rng) % 4;
	for (__u32 proto = 0; proto <= PROTO_NR; proto++) {
		for (__u32 side = 0; side < 2; side++) {
			struct outcome want;

			in->proto = proto;
			in->side = side;
			outcome_classify(&want, proto, side, in->resp, in->len,
					 in->stream);
			run(fd_map);
			run(fd_stack);
			cases++;
			if (!same(&want, &skel->bss->from_map) ||
			    !same(&want, &skel->bss->from_stack)) {
				differ++;
				fprintf(stderr,
					"differ: proto %u side %u len %u\n",
					proto, side, in->len);
			}
			known[proto] += want.known;
			errors[proto] += want.error;
		}
	}
}

/* A seed with one to three bytes changed (to a random or a telling
 * value) and maybe a shorter length. */
static void mutate(struct head *h)
{
	static const __u8 telling[] = { 0,    0xff, 0x88, 0x8d, 0x48, 0x03,
					'-',  '5',  '0',  'E',	' ',  '\r',
					0x20, 0x80, 0x01, 0x09 };
	int n = 1 + splitmix64_next(&rng) % 3;

	for (int k = 0; k < n && h->len; k++) {
		__u64 r = splitmix64_next(&rng);

		h->b[r % h->len] = r & 0x100 ?
					   telling[(r >> 9) % sizeof(telling)] :
					   (__u8)(r >> 16);
	}
	if (splitmix64_next(&rng) % 4 == 0 && h->len)
		h->len = splitmix64_next(&rng) % (h->len + 1);
}

static __u32 verified_insns(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.verified_insns;
}

int main(int argc, char **argv)
{
	long mutants = getenv("MUTANTS") ? atol(getenv("MUTANTS")) : 20000;
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR...\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(failing) / sizeof(failing[0]); i++)
		add_seed((const __u8 *)failing[i].b, failing[i].len);
	for (int i = 1; i < argc; i++)
		read_fixtures(argv[i]);
	skel = outcome_verify_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr,
			"load: %s (the verifier refused the classifier?)\n",
			strerror(errno));
		return 1;
	}
	fd_map = bpf_program__fd(skel->progs.outcome_in_map);
	fd_stack = bpf_program__fd(skel->progs.outcome_on_stack);
	printf("verified instructions: map %u, stack %u\n",
	       verified_insns(fd_map), verified_insns(fd_stack));

	for (int s = 0; s < nseeds; s++) {
		struct head h = seeds[s];

		for (h.len = 0; h.len <= seeds[s].len; h.len++)
			check(&h);
	}
	for (long m = 0; m < mutants; m++) {
		struct head h = seeds[splitmix64_next(&rng) % nseeds];

		mutate(&h);
		check(&h);
	}
	printf("%ld cases from %d seeds and %ld mutants, %ld differ\n", cases,
	       nseeds, mutants, differ);
	for (__u32 p = 1; p < PROTO_NR; p++) {
		int decoded = p == PROTO_HTTP || p == PROTO_HTTP2 ||
			      p == PROTO_REDIS || p == PROTO_POSTGRESQL ||
			      p == PROTO_MYSQL || p == PROTO_MEMCACHED ||
			      p == PROTO_DNS || p == PROTO_ZOOKEEPER ||
			      p == PROTO_MQTT;

		printf("proto %2u: %ld known, %ld errors\n", p, known[p],
		       errors[p]);
		if (decoded && (!known[p] || !errors[p]))
			failed = 1;
		if (!decoded && known[p])
			failed = 1;
	}
	print_costs();
	outcome_verify_bpf__destroy(skel);
	if (differ || failed) {
		fprintf(stderr, "FAIL: kernel and user space differ, or a "
				"protocol was never decoded\n");
		return 1;
	}
	printf("ok: the kernel's outcomes are user space's\n");
	return 0;
}
