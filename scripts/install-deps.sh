#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs the Debian packages kmond needs.
#   install-deps.sh [--if-missing] [build|test|fuzz|vm|bench|image]
#     build  what `make` needs (the default)
#     test   that and what `make test` needs (servers, clients, tools)
#     fuzz   what `make fuzz` adds to the build's (libFuzzer's runtime)
#     vm     what `make vmtest` needs to boot Debian's kernels under qemu
#            (tests/vm/), and nothing plain make needs
#     bench  that and what bench/peers.sh compares kmond with
#     image  what `make image` needs (podman, mmdebstrap)
#     arm64  what `make ARCH=arm64` needs: the build's host tools, Debian's
#            aarch64 cross compiler and the arm64 libraries, and qemu for
#            an arm64 guest (this set alone adds the arm64 architecture)
#   --if-missing   do nothing when every tool and header is already there;
#                  as a user, name what is missing and install nothing
set -euo pipefail

if_missing=0
[ "${1:-}" = "--if-missing" ] && { if_missing=1; shift; }
set_name=${1:-build}

build_packages=(
	make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
	librdkafka-dev libyaml-dev libmicrohttpd-dev libcurl4-openssl-dev
	pkg-config linux-libc-dev scdoc
)
test_packages=(
	kcat iproute2 procps python3 coreutils util-linux
	graphviz chromium nginx wrk curl redis-server redis-tools prometheus nodejs
	podman runc mmdebstrap busybox-static python3-yaml nftables
	openssl postgresql postgresql-client mariadb-server mariadb-client
	memcached libmemcached-tools mosquitto mosquitto-clients dnsmasq-base
	bind9-dnsutils openssh-server openssh-client
	nghttp2-client # h2load: HTTP/2 streams on one connection (http2_requests)
	libssl-dev # kmt_tls_static links libssl.a
	python3-redis python3-psycopg2 python3-asyncpg
	python3-grpcio # a real gRPC server and client (grpc_outcomes)
	rabbitmq-server amqp-tools zookeeper python3-kazoo
)
# kmon-trace's tests install OpenTelemetry's OTLP definitions with npm.
# A nodejs from NodeSource brings its own npm and conflicts with Debian's.
command -v npm >/dev/null 2>&1 || test_packages+=(npm)

# make fuzz: clang with its libFuzzer and sanitizer runtimes.
fuzz_packages=(clang libclang-rt-14-dev)
# make vmtest: qemu, a static busybox for the initramfs, depmod and
# modprobe, mkfs.ext4 for the guest's scratch disk, xz and zstd for vmlinux,
# readelf to check busybox is static.
vm_packages=(qemu-system-x86 busybox-static kmod e2fsprogs xz-utils zstd binutils)
# make image: podman builds the Containerfile on a base mmdebstrap makes.
image_packages=(podman runc mmdebstrap)
# make ARCH=arm64: the cross compiler and the build set's libraries for
# arm64 (multiarch: their headers land in /usr/include/aarch64-linux-gnu,
# where aarch64-linux-gnu-gcc looks). clang, bpftool and scdoc run on the host.
# tests/vm/kernel.sh 6.1-arm64 boots under qemu-system-aarch64, on a root
# mmdebstrap unpacks (tests/vm/rootfs.sh), with the initramfs tools of the
# vm set but busybox (kernel.sh unpacks busybox-static:arm64).
arm64_packages=(
	qemu-system-arm mmdebstrap kmod e2fsprogs binutils
	make clang llvm bpftool scdoc gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	libbpf-dev:arm64 libelf-dev:arm64 zlib1g-dev:arm64 librdkafka-dev:arm64
	libyaml-dev:arm64 libmicrohttpd-dev:arm64 libcurl4-openssl-dev:arm64
	linux-libc-dev:arm64 libssl-dev:arm64
)
# bench/peers.sh: the tools an operator would use instead of kmond;
# perf: where a cost goes (bench/fleet.sh's profile, the outcomes' cost).
bench_packages=(libbpf-tools bpftrace nginx wrk linux-perf)

# What have_tools and have_headers did not find, for the message.
missing=()

# Also in /usr/sbin, which a user's PATH may lack (bpftool).
have_tools() {
	local tool ret=0
	for tool in "$@"; do
		PATH="$PATH:/usr/sbin:/sbin" command -v "$tool" >/dev/null 2>&1 ||
			{ missing+=("$tool"); ret=1; }
	done
	return $ret
}

have_headers() {
	local header ret=0
	for header in "$@"; do
		[ -e "/usr/include/$header" ] ||
			[ -e "/usr/include/x86_64-linux-gnu/$header" ] ||
			{ missing+=("$header"); ret=1; }
	done
	return $ret
}

# One probe per package whose absence the build would hit.
have_build() {
	have_tools clang llc llvm-strip bpftool gcc make scdoc &&
		have_headers bpf/libbpf.h gelf.h zlib.h librdkafka/rdkafka.h \
			yaml.h asm/unistd_64.h microhttpd.h curl/curl.h
}

# One probe per package whose absence the tests would hit.
have_test() {
	have_build || return 1
	have_tools kcat ip python3 dot chromium wrk curl redis-server \
		redis-benchmark redis-cli prometheus promtool node npm || return 1
	have_tools podman runc mmdebstrap || return 1
	[ -x /bin/busybox ] || return 1 # the containers' image
	python3 -c 'import yaml' 2>/dev/null || return 1 # reading manifests
	# protocol identification's servers and clients (proto_servers)
	have_tools openssl pgbench psql mariadb mariadb-install-db memcslap \
		mosquitto_pub dig ssh h2load || return 1
	for tool in mariadbd memcached mosquitto dnsmasq sshd; do
		[ -x /usr/sbin/$tool ] || [ -x /usr/bin/$tool ] || return 1
	done
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || return 1
	ls /usr/lib/*/libssl.a >/dev/null 2>&1 || return 1 # kmt_tls_static
	# the trace accuracy harness's application (Debian's python3)
	/usr/bin/python3 -c 'import redis, psycopg2, asyncpg' 2>/dev/null || return 1
	/usr/bin/python3 -c 'import grpc' 2>/dev/null || return 1 # grpc_outcomes
	# the slow ones (proto_servers_slow): RabbitMQ, ZooKeeper, their clients
	have_tools epmd java amqp-publish amqp-consume || return 1
	[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] &&
		[ -e /usr/share/java/zookeeper.jar ] &&
		/usr/bin/python3 -c 'import kazoo' 2>/dev/null || return 1
	# in /usr/sbin, which a user's PATH may lack
	[ -x /usr/sbin/nginx ] && [ -x /usr/sbin/nft ] || return 1
	have_headers librdkafka/rdkafka_mock.h
}

have_fuzz() {
	have_tools clang || return 1
	ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
		>/dev/null 2>&1 || { missing+=(libclang_rt.fuzzer); return 1; }
}

have_vm() {
	have_tools qemu-system-x86_64 depmod modprobe mkfs.ext4 xz zstd readelf ||
		return 1
	# busybox-static, not the dynamic busybox package
	[ -x /bin/busybox ] && ! readelf -l /bin/busybox | grep -q INTERP
}

have_arm64() {
	have_tools clang llvm-strip bpftool make scdoc aarch64-linux-gnu-gcc \
		qemu-system-aarch64 mmdebstrap depmod modprobe mkfs.ext4 readelf || return 1
	local header ret=0
	for header in bpf/libbpf.h gelf.h zlib.h librdkafka/rdkafka.h yaml.h \
		microhttpd.h curl/curl.h asm/unistd.h openssl/opensslconf.h; do
		[ -e "/usr/include/$header" ] ||
			[ -e "/usr/include/aarch64-linux-gnu/$header" ] ||
			{ missing+=("$header:arm64"); ret=1; }
	done
	# libbpf-dev's headers are arch-independent: the arm64 library proves it.
	[ -e /usr/lib/aarch64-linux-gnu/libbpf.so ] ||
		{ missing+=(libbpf-dev:arm64); ret=1; }
	return $ret
}

have_image() {
	have_tools podman runc mmdebstrap
}

have_bench() {
	have_build && have_tools wrk bpftrace perf && [ -x /usr/sbin/nginx ] &&
		[ -x /usr/sbin/offcputime ]
}

case "$set_name" in
build) packages=("${build_packages[@]}") ;;
test) packages=("${build_packages[@]}" "${test_packages[@]}") ;;
fuzz) packages=("${fuzz_packages[@]}") ;;
vm) packages=("${vm_packages[@]}") ;;
bench) packages=("${build_packages[@]}" "${bench_packages[@]}") ;;
image) packages=("${image_packages[@]}") ;;
arm64) packages=("${arm64_packages[@]}") ;;
*) echo "install-deps: unknown set '$set_name' (build, test, fuzz, vm, bench, image or arm64)" >&2; exit 2 ;;
esac

if [ $if_missing -eq 1 ] && "have_$set_name"; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ] && [ $if_missing -eq 1 ]; then
	# A user's make goes on: what is there may be enough (make check).
	echo "install-deps: missing ${missing[*]:-$set_name packages};" \
		"not root, so installing nothing (sudo make ... installs them)" >&2
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing $set_name packages; run as root (sudo make ...)" >&2
	exit 1
fi
echo "install-deps: installing ${packages[*]}" >&2
# One install at a time: a parallel make (or make fuzz beside make vmtest)
# may ask for two sets at once, and apt takes its locks without waiting.
# (the lock: this script's own file)
exec 9<"$0"
flock 9
export DEBIAN_FRONTEND=noninteractive
# Only the arm64 set needs a foreign architecture; the others never add one.
if [ "$set_name" = arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
