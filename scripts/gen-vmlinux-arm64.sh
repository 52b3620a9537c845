#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Regenerates vmlinux/arm64/vmlinux.h from Debian's arm64 kernel package,
# without booting it or installing it (needs the arm64 architecture in
# dpkg: scripts/install-deps.sh arm64):
#   scripts/gen-vmlinux-arm64.sh [PACKAGE]    default: what linux-image-arm64 names
# Debian's arm64 vmlinuz is an uncompressed Image, not an ELF, so bpftool
# cannot read its .BTF section by name: the BTF blob is found by its
# header (magic 0xeb9f, version 1, flags 0, hdr_len 24) and cut out at
# the length the header gives (hdr_len + str_off + str_len).
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=${1:-$(apt-cache depends linux-image-arm64:arm64 |
	awk '/Depends: linux-image-/ { print $2; exit }')}
bpftool=$(PATH="$PATH:/usr/sbin:/sbin" command -v bpftool)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$work" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
dpkg -x "$work"/*.deb "$work/root"
image=$(ls "$work"/root/boot/vmlinuz-*)

offsets=$(LC_ALL=C grep -obUaP '\x9f\xeb\x01\x00\x18\x00\x00\x00' "$image" | cut -d: -f1)
[ "$(echo "$offsets" | wc -w)" -eq 1 ] || {
	echo "gen-vmlinux-arm64: expected one BTF header in $image, found: $offsets" >&2
	exit 1
}
# u32s after the header's first word: hdr_len type_off type_len str_off str_len
read -r hdr_len _ _ str_off str_len < <(od -An -w20 -t u4 -j $((offsets + 4)) -N 20 "$image")
dd if="$image" of="$work/vmlinux.btf" bs=1M iflag=skip_bytes,count_bytes \
	skip="$offsets" count=$((hdr_len + str_off + str_len)) status=none
"$bpftool" btf dump file "$work/vmlinux.btf" format c >vmlinux/arm64/vmlinux.h
echo "vmlinux/arm64/vmlinux.h from $pkg ($(basename "$image"))" >&2
