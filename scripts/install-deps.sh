#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs every Debian package kmond's build and tests need.
#   --if-missing   do nothing when every tool and header is already there
#   --vm           also what make vmtest needs to boot Debian's kernels
#                  under qemu (tests/vm/), and nothing plain make needs
set -euo pipefail

packages=(
	make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
	librdkafka-dev libyaml-dev pkg-config linux-libc-dev libclang-rt-14-dev
	kcat iproute2 procps python3 coreutils util-linux
	graphviz chromium nginx wrk curl redis-server redis-tools
)

# make vmtest: qemu, a static busybox for the initramfs, depmod and
# modprobe, mkfs.ext4 for the guest's scratch disk, xz and zstd for vmlinux,
# readelf to check busybox is static.
vm_packages=(qemu-system-x86 busybox-static kmod e2fsprogs xz-utils zstd binutils)

have_vm() {
	local tool
	for tool in qemu-system-x86_64 depmod modprobe mkfs.ext4 xz zstd readelf; do
		command -v "$tool" >/dev/null 2>&1 || return 1
	done
	# busybox-static, not the dynamic busybox package
	[ -x /bin/busybox ] && ! readelf -l /bin/busybox | grep -q INTERP
}

# One probe per package whose absence the build or the tests would hit.
have_everything() {
	local tool header
	for tool in clang llc bpftool kcat ip python3 gcc make dot chromium \
		wrk curl redis-server redis-benchmark redis-cli; do
		command -v "$tool" >/dev/null 2>&1 || return 1
	done
	# in /usr/sbin, which a user's PATH may lack
	[ -x /usr/sbin/nginx ] || return 1
	for header in bpf/libbpf.h gelf.h zlib.h librdkafka/rdkafka_mock.h \
		yaml.h asm/unistd_64.h; do
		[ -e "/usr/include/$header" ] ||
			[ -e "/usr/include/x86_64-linux-gnu/$header" ] || return 1
	done
	# libFuzzer's runtime (make fuzz)
	ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
		>/dev/null 2>&1 || return 1
}

if_missing=0
vm=0
for arg in "$@"; do
	case "$arg" in
	--if-missing) if_missing=1 ;;
	--vm) vm=1 ;;
	*)
		echo "install-deps: unknown option $arg (--if-missing, --vm)" >&2
		exit 2
		;;
	esac
done
if [ $vm = 1 ]; then
	packages=("${vm_packages[@]}")
	have() { have_vm; }
else
	have() { have_everything; }
fi
if [ $if_missing = 1 ] && have; then
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
