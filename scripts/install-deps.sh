#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs every Debian package kmond's build and tests need.
#   --if-missing   do nothing when every tool and header is already there
set -euo pipefail

packages=(
	make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
	librdkafka-dev libyaml-dev pkg-config linux-libc-dev libclang-rt-14-dev
	kcat iproute2 procps python3 coreutils util-linux
	graphviz chromium nginx wrk curl redis-server redis-tools
	openssl postgresql postgresql-client mariadb-server mariadb-client
	memcached libmemcached-tools mosquitto mosquitto-clients dnsmasq-base
	bind9-dnsutils openssh-server openssh-client
)

# One probe per package whose absence the build or the tests would hit.
have_everything() {
	local tool header
	for tool in clang llc bpftool kcat ip python3 gcc make dot chromium \
		wrk curl redis-server redis-benchmark redis-cli openssl pgbench \
		psql mariadb mariadb-install-db memcslap mosquitto_pub dig ssh; do
		command -v "$tool" >/dev/null 2>&1 || return 1
	done
	# in /usr/sbin, which a user's PATH may lack
	[ -x /usr/sbin/nginx ] || return 1
	for tool in mariadbd memcached mosquitto dnsmasq sshd; do
		[ -x /usr/sbin/$tool ] || [ -x /usr/bin/$tool ] || return 1
	done
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || return 1
	for header in bpf/libbpf.h gelf.h zlib.h librdkafka/rdkafka_mock.h \
		yaml.h asm/unistd_64.h; do
		[ -e "/usr/include/$header" ] ||
			[ -e "/usr/include/x86_64-linux-gnu/$header" ] || return 1
	done
	# libFuzzer's runtime (make fuzz)
	ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
		>/dev/null 2>&1 || return 1
}

if [ "${1:-}" = "--if-missing" ] && have_everything; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing build or test packages; run as root (sudo make ...)" >&2
	exit 1
fi
echo "install-deps: installing ${packages[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
