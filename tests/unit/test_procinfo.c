// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Cgroup prefix matching and container ids from the runtimes' layouts. */
#include <unistd.h>

#include "provider/procinfo.h"
#include "unit.h"

#define ID "4f1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5e4f30211a2b3c4d5e6f70819"

static const char *id_of(const char *path)
{
	static char id[80];

	return cgroup_container_id(path, id, sizeof(id)) ? id : "(none)";
}

static void test_container_ids(void)
{
	CHECK_STR(id_of("/system.slice/docker-" ID ".scope"), ID);
	CHECK_STR(id_of("/docker/" ID), ID);
	CHECK_STR(id_of("/kubepods.slice/kubepods-burstable.slice/"
			"kubepods-burstable-pod1234.slice/cri-containerd-" ID
			".scope"),
		  ID);
	CHECK_STR(id_of("/kubepods/burstable/pod0c9e-11/" ID), ID);
	CHECK_STR(id_of("/machine.slice/libpod-" ID ".scope"), ID);
	/* cgroupfs managers: no .scope */
	CHECK_STR(id_of("/libpod_parent/libpod-" ID), ID);
	CHECK_STR(id_of("/kubepods/besteffort/pod1/crio-" ID), ID);
	CHECK_STR(id_of("/libpod_parent/libpod-conmon-" ID), "(none)");
	CHECK_STR(id_of("/kubepods.slice/crio-" ID ".scope"), ID);
	CHECK_STR(id_of("/system.slice/docker-" ID ".scope/init"), ID);
	CHECK_STR(id_of("/system.slice/nginx.service"), "(none)");
	CHECK_STR(id_of("/"), "(none)");
	CHECK_STR(id_of(""), "(none)");
	/* 63 hex digits, uppercase, a scope without a known prefix. */
	CHECK_STR(
		id_of("/docker/"
		      "4f1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5e4f30211a2b3c4d5e6f7081"),
		"(none)");
	CHECK_STR(
		id_of("/docker/"
		      "4F1D2C3B4A5968778695A4B3C2D1E0F9A8B7C6D5E4F30211A2B3C4D5E6F70819"),
		"(none)");
	CHECK_STR(id_of("/system.slice/other-" ID ".scope"), "(none)");
}

static void test_cgroup_lines(void)
{
	const char *hybrid = "9:name=systemd:/\n"
			     "4:memory:/process_api/1465e1ff\n"
			     "0::/\n";
	const char *v2 = "0::/system.slice/docker-" ID ".scope\n";

	CHECK(cgroups_under(hybrid, "/process_api"));
	CHECK(cgroups_under(hybrid, "/process_api/"));
	CHECK(cgroups_under(hybrid, "/process_api/1465e1ff"));
	CHECK(!cgroups_under(hybrid, "/process"));
	CHECK(!cgroups_under(hybrid, "/process_api/1465e1ff/x"));
	CHECK(cgroups_under(hybrid, "/"));
	CHECK(cgroups_under(v2, "/system.slice"));
	CHECK(!cgroups_under(v2, "/user.slice"));
	CHECK(cgroups_in_container(v2, "4f1d2c3b4a59"));
	CHECK(cgroups_in_container(v2, ID));
	CHECK(!cgroups_in_container(v2, "4f1d2c3b4a5a"));
	CHECK(!cgroups_in_container(hybrid, "4f1d2c3b4a59"));
	/* Malformed lines are skipped, not trusted. */
	CHECK(!cgroups_under("garbage\n:\n", "/"));
	CHECK(!cgroups_under("", "/"));
}

/* The unified hierarchy's path (protocol capture's cgroups). */
static void test_cgroup2_path(void)
{
	char path[64], tiny[4];

	CHECK(procinfo__parse_cgroup2("9:name=systemd:/\n0::/a/b.scope\n", path,
				      sizeof(path)));
	CHECK_STR(path, "/a/b.scope");
	CHECK(procinfo__parse_cgroup2("0::/\n", path, sizeof(path)));
	CHECK_STR(path, "/");
	CHECK(procinfo__parse_cgroup2("0::/../../kubepods", path,
				      sizeof(path)));
	CHECK_STR(path, "/../../kubepods");
	/* v1 only, empty, too long for the buffer: none */
	CHECK(!procinfo__parse_cgroup2("4:memory:/x\n", path, sizeof(path)));
	CHECK(!procinfo__parse_cgroup2("0::\n", path, sizeof(path)));
	CHECK(!procinfo__parse_cgroup2("0::/abcdef\n", tiny, sizeof(tiny)));
	CHECK(cgroup_path_under("/a/b", "/a"));
	CHECK(cgroup_path_under("/a", "/a"));
	CHECK(cgroup_path_under("/a", "/"));
	CHECK(!cgroup_path_under("/ab", "/a"));
	CHECK(!cgroup_path_under("/a", "/a/b"));
	CHECK(cgroup_path_under("/../x", "/.."));
	CHECK(!cgroup_path_under("/..x", "/.."));
}

static void test_stat_lines(void)
{
	uint32_t ppid = 0;
	char comm[16];

	CHECK(procinfo__parse_ppid("42 (bash) S 7 42 42 0", &ppid) == 0 &&
	      ppid == 7);
	/* comm with spaces, parentheses and a newline */
	CHECK(procinfo__parse_ppid("42 (a) b (c)) R 9 1 1", &ppid) == 0 &&
	      ppid == 9);
	CHECK(procinfo__parse_ppid("42 (x\n) S 11\n", &ppid) == 0 &&
	      ppid == 11);
	/* malformed: no ')', no state, no ppid, junk, overflow, empty */
	CHECK(procinfo__parse_ppid("42 bash S 7", &ppid) == -1);
	CHECK(procinfo__parse_ppid("42 (bash)", &ppid) == -1);
	CHECK(procinfo__parse_ppid("42 (bash) S", &ppid) == -1);
	CHECK(procinfo__parse_ppid("42 (bash) S x", &ppid) == -1);
	CHECK(procinfo__parse_ppid("42 (bash) S 7x 1", &ppid) == -1);
	CHECK(procinfo__parse_ppid("42 (bash) 1 7", &ppid) == -1);
	CHECK(procinfo__parse_ppid("42 (bash) S 99999999999", &ppid) == -1);
	CHECK(procinfo__parse_ppid("", &ppid) == -1);

	procinfo__parse_comm("nginx\n", comm);
	CHECK_STR(comm, "nginx");
	procinfo__parse_comm("a-very-long-name-beyond-15\n", comm);
	CHECK_STR(comm, "a-very-long-nam");
	procinfo__parse_comm("", comm);
	CHECK_STR(comm, "");
	procinfo__parse_comm("\x01\xff\n", comm);
	CHECK_STR(comm, "\x01\xff");
}

static void test_self(void)
{
	char buf[4096];

	CHECK(procinfo__exe(getpid(), buf, sizeof(buf)) == 0);
	CHECK(strstr(buf, "test_procinfo") != NULL);
	CHECK(procinfo__cgroups(getpid(), buf, sizeof(buf)) == 0);
	CHECK(cgroups_under(buf, "/"));
	CHECK(procinfo__exe(0, buf, sizeof(buf)) < 0);
}

int main(void)
{
	test_container_ids();
	test_cgroup_lines();
	test_cgroup2_path();
	test_stat_lines();
	test_self();
	return unit_done("procinfo");
}
