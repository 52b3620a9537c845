#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Fetches one Debian kernel package and makes it bootable under qemu,
# without installing anything into the host's /boot:
#   tests/vm/kernel.sh NAME CACHE_DIR      NAME: 6.1, 6.1-rt or 6.12
# Leaves CACHE_DIR/NAME/{root/,vmlinux,version,initrd.gz} and prints that
# directory. Done once per package version: a newer Debian kernel gets a
# new tree.
set -euo pipefail
name=$1
cache=$2
here=$(cd "$(dirname "$0")" && pwd)

# The meta package names the newest image of each series.
case "$name" in
6.1) meta=linux-image-amd64 ;;
6.1-rt) meta=linux-image-rt-amd64 ;;
6.12) meta=linux-image-6.12-amd64 ;;
*)
	echo "kernel.sh: unknown kernel '$name' (6.1, 6.1-rt, 6.12)" >&2
	exit 2
	;;
esac
pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }')
[ -n "$pkg" ] || {
	echo "kernel.sh: apt-cache does not know $meta (apt-get update?)" >&2
	exit 1
}

dir=$(realpath -m "$cache/$name")
mkdir -p "$dir"
if [ "$(cat "$dir/package" 2>/dev/null)" != "$pkg" ] || [ ! -s "$dir/initrd.gz" ]; then
	rm -rf "$dir/root" "$dir"/*.deb "$dir/vmlinux" "$dir/initrd.gz"
	(cd "$dir" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
	deb=$(ls "$dir"/*.deb)
	dpkg -x "$deb" "$dir/root"
	rm -f "$deb"
	version=$(ls "$dir/root/lib/modules")
	# The .deb ships no modules.dep.
	depmod -b "$dir/root" "$version"
	# Boot the uncompressed ELF (it has a PVH entry point): decompressing
	# bzImage in the guest costs ~3 s under TCG. The payload is the xz
	# stream inside vmlinuz.
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$dir/root/boot/vmlinuz-$version" | head -1 | cut -d: -f1)
	[ -n "$off" ] || {
		echo "kernel.sh: no xz payload in vmlinuz-$version" >&2
		exit 1
	}
	tail -c +$((off + 1)) "$dir/root/boot/vmlinuz-$version" | xz -dcq >"$dir/vmlinux" 2>/dev/null || true
	head -c4 "$dir/vmlinux" | grep -q ELF || {
		echo "kernel.sh: could not unpack vmlinux from vmlinuz-$version" >&2
		exit 1
	}
	echo "$version" >"$dir/version"
	"$here/initramfs.sh" "$dir/root" "$version" "$dir/initrd.gz"
	echo "$pkg" >"$dir/package"
fi
echo "$dir"
