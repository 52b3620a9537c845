#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs every Debian package kmond's build and tests need.
#   --if-missing   do nothing when every tool and header is already there
set -euo pipefail

packages=(
	make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
	librdkafka-dev libyaml-dev pkg-config linux-libc-dev
	kcat graphviz iproute2 procps python3 coreutils util-linux
)

# One probe per package whose absence the build or the tests would hit.
have_everything() {
	local tool header
	for tool in clang llc bpftool kcat dot ip python3 gcc make; do
		command -v "$tool" >/dev/null 2>&1 || return 1
	done
	for header in bpf/libbpf.h gelf.h zlib.h librdkafka/rdkafka_mock.h \
		yaml.h asm/unistd_64.h; do
		[ -e "/usr/include/$header" ] ||
			[ -e "/usr/include/x86_64-linux-gnu/$header" ] || return 1
	done
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
