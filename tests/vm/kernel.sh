#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Fetches one Debian kernel package and makes it bootable under qemu,
# without installing anything into the host's /boot:
#   tests/vm/kernel.sh NAME CACHE_DIR      NAME: 6.1, 6.1-rt, 6.12 or 6.1-arm64
# Leaves CACHE_DIR/NAME/{root/,vmlinux,version,initrd.gz} and prints that
# directory; an arm64 kernel also leaves arch (run.sh reads it), the
# arm64 busybox its initramfs holds and rootfs, the path of the guest's
# root (tests/vm/rootfs.sh, in CACHE_DIR). Done once per package version
# (a newer Debian kernel gets a new tree), the initramfs again when
# tests/vm/init changes.
set -euo pipefail
name=$1
cache=$2
here=$(cd "$(dirname "$0")" && pwd)

# The meta package names the newest image of each series.
arch=x86
case "$name" in
6.1) meta=linux-image-amd64 ;;
6.1-rt) meta=linux-image-rt-amd64 ;;
6.12) meta=linux-image-6.12-amd64 ;;
# needs the arm64 architecture in dpkg (scripts/install-deps.sh arm64)
6.1-arm64) meta=linux-image-arm64:arm64 arch=arm64 ;;
*)
	echo "kernel.sh: unknown kernel '$name' (6.1, 6.1-rt, 6.12, 6.1-arm64)" >&2
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
if [ "$(cat "$dir/package" 2>/dev/null)" != "$pkg" ]; then
	rm -rf "$dir/root" "$dir"/*.deb "$dir/vmlinux" "$dir/initrd.gz" "$dir/package" \
		"$dir/arch" "$dir/busybox-root"
	(cd "$dir" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
	deb=$(ls "$dir"/*.deb)
	dpkg -x "$deb" "$dir/root"
	rm -f "$deb"
	version=$(ls "$dir/root/lib/modules")
	# The .deb ships no modules.dep.
	depmod -b "$dir/root" "$version"
	if [ "$arch" = arm64 ]; then
		# Debian's arm64 vmlinuz is already an uncompressed Image, which
		# qemu's virt machine boots as it is.
		cp "$dir/root/boot/vmlinuz-$version" "$dir/vmlinux"
		# The initramfs's static busybox, for arm64: unpacked, never
		# installed (it would replace the host's /bin/busybox).
		(cd "$dir" && apt-get download -q busybox-static:arm64 2>&1 |
			grep -v '^W: Download is performed unsandboxed' >&2 || true)
		dpkg -x "$dir"/busybox-static_*.deb "$dir/busybox-root"
		rm -f "$dir"/busybox-static_*.deb
	else
		# Boot the uncompressed ELF (it has a PVH entry point): decompressing
		# bzImage in the guest costs ~3 s under TCG. The payload is the xz
		# (6.1) or zstd (6.12) stream inside vmlinuz: the first offset with a
		# magic number that decompresses to an ELF.
		vmlinuz=$dir/root/boot/vmlinuz-$version
		for magic in 'xz \xfd7zXZ\x00' 'zstd \x28\xb5\x2f\xfd'; do
			for off in $(LC_ALL=C grep -obUaP "${magic#* }" "$vmlinuz" | cut -d: -f1); do
				tail -c +$((off + 1)) "$vmlinuz" | "${magic%% *}" -dcq >"$dir/vmlinux" 2>/dev/null || true
				head -c4 "$dir/vmlinux" | grep -q ELF && break 2
			done
		done
		head -c4 "$dir/vmlinux" | grep -q ELF || {
			echo "kernel.sh: could not unpack vmlinux from $vmlinuz" >&2
			exit 1
		}
	fi
	echo "$arch" >"$dir/arch"
	echo "$version" >"$dir/version"
	echo "$pkg" >"$dir/package"
fi
# Again whenever the init or the module list changed.
if [ ! -s "$dir/initrd.gz" ] || [ "$here/init" -nt "$dir/initrd.gz" ] ||
	[ "$here/initramfs.sh" -nt "$dir/initrd.gz" ]; then
	busybox=/bin/busybox
	[ -d "$dir/busybox-root" ] && busybox=$dir/busybox-root/bin/busybox
	"$here/initramfs.sh" "$dir/root" "$(cat "$dir/version")" "$dir/initrd.gz" "$busybox"
fi
# Checked every time: rootfs.sh makes it again when its packages change.
if [ "$arch" = arm64 ]; then
	"$here/rootfs.sh" arm64 "$cache" >"$dir/rootfs"
fi
echo "$dir"
