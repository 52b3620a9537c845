// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loads a BPF object, attaches every program in it, says "attached" on
 * stdout and holds them until SIGTERM or SIGINT (bench/tcp-nginx.sh's
 * and bench/protocol-conn.sh's floor: empty programs on the tcp
 * collector's hooks). Cgroup programs go on CGROUP (a cgroup v2 dir),
 * else on the root of the cgroup v2 hierarchy. Uprobe programs
 * (SEC("uprobe/FUNC"), SEC("uretprobe/FUNC")) go on FUNC of the library
 * FLOOR_LIB, in process FLOOR_PID only, as kmond attaches its own
 * (bench/tls-cost.sh's floor).
 *   [FLOOR_PID=PID FLOOR_LIB=PATH] floor_load OBJECT.o [CGROUP] */
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The cgroup v2 root, opened; -1 when none is mounted. */
static int cgroup2_root(void)
{
	char dev[256], dir[4096], type[64];
	FILE *f = fopen("/proc/self/mounts", "r");
	int fd = -1;

	while (f && fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3)
		if (!strcmp(type, "cgroup2")) {
			fd = open(dir, O_RDONLY | O_DIRECTORY);
			break;
		}
	if (f)
		fclose(f);
	return fd;
}

/* A uprobe program on FLOOR_LIB's function its section names, in
 * FLOOR_PID. */
static struct bpf_link *attach_uprobe(struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);
	const char *pid = getenv("FLOOR_PID"), *lib = getenv("FLOOR_LIB");
	bool ret = !strncmp(sec, "uretprobe/", 10);
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret);

	if (!pid || !lib || !strchr(sec, '/'))
		return NULL;
	opts.func_name = strchr(sec, '/') + 1;
	return bpf_program__attach_uprobe_opts(prog, atoi(pid), lib, 0, &opts);
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;

	int cgroup = -1;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: floor_load OBJECT.o [CGROUP]\n");
		return 2;
	}
	if (argc == 3 && (cgroup = open(argv[2], O_RDONLY | O_DIRECTORY)) < 0) {
		perror(argv[2]);
		return 1;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "floor_load: cannot load %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		bool on_cgroup = bpf_program__type(prog) ==
				 BPF_PROG_TYPE_CGROUP_SKB;

		if (on_cgroup && cgroup < 0 && (cgroup = cgroup2_root()) < 0) {
			fprintf(stderr,
				"floor_load: %s needs a cgroup (no "
				"cgroup v2 hierarchy)\n",
				bpf_program__name(prog));
			return 2;
		}
		bool uprobe = bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE;

		if (!(on_cgroup ? bpf_program__attach_cgroup(prog, cgroup) :
		      uprobe	? attach_uprobe(prog) :
				  bpf_program__attach(prog))) {
			fprintf(stderr, "floor_load: cannot attach %s\n",
				bpf_program__name(prog));
			return 1;
		}
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	bpf_object__close(obj);
	return 0;
}
