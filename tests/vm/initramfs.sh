#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Builds the guest's initramfs: static busybox, the modules that mount the
# host's root over 9p, the overlay an arm64 guest's root is, the scratch
# disk, and loop devices (a test makes disks of its own), in dependency
# order; and tests/vm/init.
#   tests/vm/initramfs.sh KERNEL_ROOT VERSION OUT.gz [BUSYBOX]
# BUSYBOX is the guest architecture's static busybox (/bin/busybox).
set -euo pipefail
kroot=$1
version=$2
out=$3
busybox=${4:-/bin/busybox}
here=$(cd "$(dirname "$0")" && pwd)

stage=$(mktemp -d /tmp/kmond-initramfs.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,newroot,modules}
cp "$busybox" "$stage/bin/busybox"
# a dynamic busybox would find no libc in the initramfs
if readelf -l "$stage/bin/busybox" | grep -q INTERP; then
	echo "initramfs.sh: $busybox is not static (install busybox-static)" >&2
	exit 1
fi
ln -s busybox "$stage/bin/sh"
install -m 0755 "$here/init" "$stage/init"

# modprobe --show-depends lists each module after the ones it needs (with
# its full path); a module built into this kernel shows as "builtin" and
# needs no insmod.
: >"$stage/modules/order"
for m in virtio_pci 9pnet_virtio 9p overlay virtio_blk ext4 loop; do
	modprobe -d "$kroot" -S "$version" --show-depends "$m"
done | awk '$1 == "insmod" { print $2 }' | while read -r ko; do
	base=$(basename "$ko")
	grep -qx "${base%%.ko*}.ko" "$stage/modules/order" && continue
	case "$ko" in
	*.xz) xz -dc "$ko" >"$stage/modules/${base%%.ko*}.ko" ;;
	*.zst) zstd -qdc "$ko" >"$stage/modules/${base%%.ko*}.ko" ;;
	*) cp "$ko" "$stage/modules/" ;;
	esac
	echo "${base%%.ko*}.ko" >>"$stage/modules/order"
done
(cd "$stage" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 >"$out"
