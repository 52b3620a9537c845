#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The root of a guest whose architecture is not the host's (arm64): a
# Debian bookworm tree with what the core tests run (bash, coreutils,
# python3, iproute2, util-linux, bpftool, nginx, curl, wrk) and the runtime
# libraries of the cross-built kmond. The guest mounts it over 9p as its
# root, with the checkout from the host's root on top (tests/vm/init).
#   tests/vm/rootfs.sh ARCH CACHE_DIR
# Leaves CACHE_DIR/rootfs-ARCH/ and prints it; made again only when the
# package list below changes (about 15 s and 220 MB).
#
# mmdebstrap's extract variant unpacks the packages and runs none of
# their scripts, so no foreign program runs here (no qemu-user, no
# binfmt_misc); what those scripts would have made is made below.
set -euo pipefail
arch=$1
cache=$2

packages=(
	# the tests and tests/run
	bash dash coreutils findutils grep sed mawk gzip procps util-linux
	mount e2fsprogs iproute2 kmod python3 bpftool curl nginx wrk base-passwd
	# what the cross-built programs link (make ARCH=arm64)
	libbpf1 libelf1 zlib1g librdkafka1 libyaml-0-2 libmicrohttpd12 libcurl4
)

dir=$(realpath -m "$cache/rootfs-$arch")
want="bookworm ${packages[*]}"
if [ "$(cat "$dir.packages" 2>/dev/null)" != "$want" ]; then
	rm -rf "$dir" "$dir.packages"
	mkdir -p "$(dirname "$dir")"
	# merged /usr (bin -> usr/bin...), as a bookworm install has it
	mmdebstrap --quiet --mode=root --variant=extract --architectures="$arch" \
		--setup-hook=/usr/share/mmdebstrap/hooks/merged-usr/setup00.sh \
		--include="$(
			IFS=,
			echo "${packages[*]}"
		)" bookworm "$dir" >&2
	# What the packages' scripts would have made: the users (nginx runs
	# as root in the tests, but reads the names), awk's alternative,
	# loopback names.
	cp "$dir/usr/share/base-passwd/passwd.master" "$dir/etc/passwd"
	cp "$dir/usr/share/base-passwd/group.master" "$dir/etc/group"
	ln -sf mawk "$dir/usr/bin/awk"
	printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
		>"$dir/etc/hosts"
	echo "$want" >"$dir.packages"
fi
echo "$dir"
