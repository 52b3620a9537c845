// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A Kafka-protocol broker on loopback for tests and demos, built on
 * librdkafka's mock cluster (rdkafka_mock.h).
 *
 *   kafka_broker [-p PORT] [-a ADDR] [-b NBROKERS] [-t topic1,topic2...]
 *                [--partitions N]
 *
 * The first line on stdout is "bootstrap 127.0.0.1:P1,127.0.0.1:P2,..."
 * (ADDR instead of 127.0.0.1 with -a: a broker in a container's network
 * namespace, as the demo's shop publishes to).
 * Then it reads one command per line on stdin and answers each with "ok"
 * (or "error: ...") so a test can synchronise on it:
 *   down N | down all    broker N stops answering (connections are closed)
 *   up N | up all        broker N is back
 *   topic NAME [PARTS]   creates a topic
 *   quit                 exits (so do EOF and SIGTERM/SIGINT)
 * -t topics and "topic" get --partitions partitions (default 1). Any other
 * topic is created when a client first asks for it (the mock cluster's
 * auto-create, 4 partitions in librdkafka 2.0), so kmond's kmon.<kind>
 * topics need not be listed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define MAX_BROKERS 16

static volatile sig_atomic_t exiting;

/* librdkafka 2.0's mock brokers listen on 127.0.0.1 port 0 and offer no
 * way to choose the port or the address. A fixed port is what a demo
 * config and a kcat command line want, and a broker other network
 * namespaces reach needs an address of its own, so while the cluster is
 * created we interpose bind(): a loopback bind to port 0 gets the next
 * pinned port (if any) on the pinned address (if any) instead. The mock
 * advertises whatever getsockname() says, so metadata stays consistent.
 * Outside cluster creation (pinning false) bind() is untouched. */
static bool pinning;
static int pin_next;
static struct in_addr pin_addr; /* parse_opts: 127.0.0.1 unless -a */

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	static int (*real_bind)(int, const struct sockaddr *, socklen_t);
	struct sockaddr_in sin;

	if (!real_bind)
		real_bind = (int (*)(int, const struct sockaddr *,
				     socklen_t))dlsym(RTLD_NEXT, "bind");
	if (pinning && addr && addr->sa_family == AF_INET &&
	    len >= sizeof(sin)) {
		memcpy(&sin, addr, sizeof(sin));
		if (sin.sin_port == 0 &&
		    sin.sin_addr.s_addr == htonl(INADDR_LOOPBACK)) {
			sin.sin_addr = pin_addr;
			if (pin_next)
				sin.sin_port = htons(pin_next++);
			return real_bind(fd, (struct sockaddr *)&sin,
					 sizeof(sin));
		}
	}
	return real_bind(fd, addr, len);
}

struct opts {
	int port;
	int nbrokers;
	int partitions;
	char *topics;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: kafka_broker [-p PORT] [-a ADDR] [-b NBROKERS] "
		   "[-t topic1,topic2...] [--partitions N]\n"
		   "  brokers listen on ADDR:PORT, PORT+1, ... "
		   "(ADDR 127.0.0.1 when absent; any free port when PORT is "
		   "0 or absent)\n"
		   "  stdin commands: down N|all, up N|all, "
		   "topic NAME [PARTS], quit\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "address", required_argument, NULL, 'a' },
		{ "brokers", required_argument, NULL, 'b' },
		{ "topics", required_argument, NULL, 't' },
		{ "partitions", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, err = 0;

	pin_addr.s_addr = htonl(INADDR_LOOPBACK);
	o->port = 0;
	o->nbrokers = 1;
	o->partitions = 1;
	o->topics = NULL;
	while ((c = getopt_long(argc, argv, "p:a:b:t:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'p':
			err = parse_int(optarg, 0, 65535, &o->port);
			break;
		case 'a':
			err = inet_pton(AF_INET, optarg, &pin_addr) == 1 ? 0 :
									   -1;
			break;
		case 'b':
			err = parse_int(optarg, 1, MAX_BROKERS, &o->nbrokers);
			break;
		case 'P':
			err = parse_int(optarg, 1, 1000, &o->partitions);
			break;
		case 't':
			o->topics = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			err = -1;
		}
		if (err) {
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc || o->port + o->nbrokers - 1 > 65535) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* librdkafka 2.0 aborts (an assertion in its cleanup) when a mock broker
 * cannot bind, so a busy port is found here first and reported. */
static int ports_free(int port, int n)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int i, fd, ret;

	sin.sin_addr = pin_addr;
	for (i = 0; i < n; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		sin.sin_port = htons(port + i);
		ret = bind(fd, (struct sockaddr *)&sin, sizeof(sin));
		close(fd);
		if (ret) {
			fprintf(stderr, "kafka_broker: 127.0.0.1:%d: %s\n",
				port + i, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The mock cluster needs a client handle to live in; it is never used to
 * talk to a broker. */
static rd_kafka_t *host_handle(void)
{
	char errstr[512];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_t *rk;

	if (rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr)) !=
	    RD_KAFKA_CONF_OK) {
		rd_kafka_conf_destroy(conf);
		fprintf(stderr, "kafka_broker: %s\n", errstr);
		return NULL;
	}
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (!rk) {
		fprintf(stderr, "kafka_broker: %s\n", errstr);
		return NULL;
	}
	return rk;
}

static int create_topics(rd_kafka_mock_cluster_t *mc, char *list, int parts)
{
	char *save = NULL, *name;
	rd_kafka_resp_err_t err;

	for (name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		err = rd_kafka_mock_topic_create(mc, name, parts, 1);
		if (err) {
			fprintf(stderr, "kafka_broker: topic %s: %s\n", name,
				rd_kafka_err2str(err));
			return -1;
		}
	}
	return 0;
}

/* "down N", "up all": applies to one broker id (1..n) or to all. */
static int set_updown(rd_kafka_mock_cluster_t *mc, int nbrokers,
		      const char *arg, int up)
{
	int id, first, last;
	rd_kafka_resp_err_t err;

	if (arg && strcmp(arg, "all") == 0) {
		first = 1;
		last = nbrokers;
	} else if (arg && parse_int(arg, 1, nbrokers, &id) == 0) {
		first = last = id;
	} else {
		return -1;
	}
	for (id = first; id <= last; id++) {
		err = up ? rd_kafka_mock_broker_set_up(mc, id) :
			   rd_kafka_mock_broker_set_down(mc, id);
		if (err)
			return -1;
	}
	return 0;
}

/* Returns 1 to quit, 0 after answering. */
static int run_command(rd_kafka_mock_cluster_t *mc, int nbrokers,
		       int partitions, char *line)
{
	char *save = NULL, *cmd, *arg, *arg2;
	int parts = partitions, err = 0;

	cmd = strtok_r(line, " \t\r", &save);
	if (!cmd)
		return 0;
	arg = strtok_r(NULL, " \t\r", &save);
	arg2 = strtok_r(NULL, " \t\r", &save);
	if (strcmp(cmd, "quit") == 0) {
		printf("ok\n");
		return 1;
	} else if (strcmp(cmd, "down") == 0 || strcmp(cmd, "up") == 0) {
		err = set_updown(mc, nbrokers, arg, cmd[0] == 'u');
	} else if (strcmp(cmd, "topic") == 0 && arg) {
		if (arg2 && parse_int(arg2, 1, 1000, &parts))
			err = -1;
		else
			err = rd_kafka_mock_topic_create(mc, arg, parts, 1) ?
				      -1 :
				      0;
	} else {
		err = -1;
	}
	if (err)
		printf("error: %s%s%s\n", cmd, arg ? " " : "", arg ? arg : "");
	else
		printf("ok\n");
	return 0;
}

/* Reads stdin with poll() so SIGTERM (no SA_RESTART) ends the wait. */
static void command_loop(rd_kafka_mock_cluster_t *mc, int nbrokers,
			 int partitions)
{
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	char *nl;

	while (!exiting) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };

		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		n = read(STDIN_FILENO, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		len += n;
		buf[len] = '\0';
		while ((nl = strchr(buf, '\n'))) {
			*nl = '\0';
			if (run_command(mc, nbrokers, partitions, buf))
				return;
			fflush(stdout);
			len -= nl + 1 - buf;
			memmove(buf, nl + 1, len + 1);
		}
		if (len == sizeof(buf) - 1)
			len = 0; /* an absurd line: drop it */
	}
}

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	rd_kafka_mock_cluster_t *mc = NULL;
	rd_kafka_t *rk = NULL;
	struct opts o;
	int err = 1;

	if (parse_opts(argc, argv, &o))
		return 2;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (o.port && ports_free(o.port, o.nbrokers))
		goto cleanup;
	rk = host_handle();
	if (!rk)
		goto cleanup;
	pin_next = o.port;
	pinning = true;
	mc = rd_kafka_mock_cluster_new(rk, o.nbrokers);
	pinning = false;
	if (!mc) {
		fprintf(stderr,
			"kafka_broker: cannot start the mock cluster\n");
		goto cleanup;
	}
	if (o.topics && create_topics(mc, o.topics, o.partitions))
		goto cleanup;

	printf("bootstrap %s\n", rd_kafka_mock_cluster_bootstraps(mc));
	fflush(stdout);
	command_loop(mc, o.nbrokers, o.partitions);
	fflush(stdout);
	err = 0;
cleanup:
	if (mc)
		rd_kafka_mock_cluster_destroy(mc);
	if (rk)
		rd_kafka_destroy(rk);
	return err;
}
