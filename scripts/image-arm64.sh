#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmond's image for arm64 (`make image ARCH=arm64`) on an x86 host, with
# no arm64 program run. The Containerfile's stages run their steps in the
# image's architecture, which here would need qemu-user-static and an
# interpreter registered in the host kernel's binfmt_misc (a change to
# every container of the host). So the same image is made from the
# cross-built kmond (make ARCH=arm64) and the arm64 libraries it links,
# from Debian's packages unpacked by mmdebstrap (its extract variant runs
# no package script), gathered as the Containerfile's runtime stage
# gathers them (keep the two in step), and imported.
#   scripts/image-arm64.sh KMOND IMAGE     (as root)
#   KMOND_IMAGE_ROOT=DIR   also leaves the image's tree in DIR
set -euo pipefail
cd "$(dirname "$0")/.."
kmond=$1
image=$2
PODMAN=(podman --cgroup-manager=cgroupfs --runtime runc --events-backend file)

command -v podman >/dev/null || scripts/install-deps.sh image
tmp=$(mktemp -d /tmp/kmond-image-arm64.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
deb=$tmp/debian
img=$tmp/image
# the Containerfile's runtime packages, bash and ldd (libc-bin)
mmdebstrap --quiet --mode=root --variant=extract --architectures=arm64 \
	--setup-hook=/usr/share/mmdebstrap/hooks/merged-usr/setup00.sh \
	--include=libc6,libc-bin,bash,libbpf1,libelf1,zlib1g,librdkafka1,libyaml-0-2,libmicrohttpd12 \
	bookworm "$deb" >&2

# put FILE: a path in the Debian tree (its links followed), into the image
put() {
	mkdir -p "$img/$(dirname "$1")"
	cp -L "$deb/$1" "$img/$1"
}

# The loader and the libraries ELF (a path in the image) needs, and theirs:
# what ldd prints in the Containerfile, read from the ELF headers instead.
declare -A done_libs
libs_of() {
	local f=$1 lib dir
	for lib in $(readelf -lW "$img/$f" | sed -n 's/.*interpreter: \(.*\)]/\1/p') \
		$(readelf -dW "$img/$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		# the loader is named twice: interpreter and libc's NEEDED
		[ -n "${done_libs[${lib##*/}]:-}" ] && continue
		done_libs[${lib##*/}]=1
		case "$lib" in
		/*) put "$lib" ;;
		*)
			for dir in /usr/lib/aarch64-linux-gnu /usr/lib; do
				[ -e "$deb$dir/$lib" ] && break
			done
			[ -e "$deb$dir/$lib" ] || {
				echo "image-arm64.sh: $f needs $lib, which no package here has" >&2
				exit 1
			}
			put "$dir/$lib"
			libs_of "$dir/$lib"
			;;
		esac
	done
}

# merged /usr, as the Debian base has it (the loader's path is /lib/...)
mkdir -p "$img/usr/lib" "$img/usr/bin"
ln -s usr/lib "$img/lib"
ln -s usr/bin "$img/bin"
install -D -m 0755 "$kmond" "$img/usr/sbin/kmond"
libs_of /usr/sbin/kmond
put /usr/bin/ldd
put /usr/bin/bash
libs_of /usr/bin/bash
install -D -m 0644 configs/kmond.yaml "$img/etc/kmond/kmond.yaml"
# The CA bundle is made by ca-certificates' script, which the extract
# variant does not run; it is the same file on every architecture.
install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$img/etc/ssl/certs/ca-certificates.crt"
echo 'hosts: files dns' >"$img/etc/nsswitch.conf"
mkdir -m 1777 "$img/tmp"
if [ -n "${KMOND_IMAGE_ROOT:-}" ]; then
	rm -rf "$KMOND_IMAGE_ROOT"
	mkdir -p "$KMOND_IMAGE_ROOT"
	cp -a "$img/." "$KMOND_IMAGE_ROOT/"
fi
tar -C "$img" -c . | "${PODMAN[@]}" import -q --arch arm64 \
	--change 'USER 0' --change 'ENTRYPOINT ["/usr/sbin/kmond"]' \
	--change 'CMD ["-c", "/etc/kmond/kmond.yaml", "--watch"]' - "$image" >/dev/null
"${PODMAN[@]}" image inspect -f '{{.Size}} {{.Architecture}}' "$image" |
	awk -v i="$image" '{ printf "  SIZE     %s: %.1f MB (%s)\n", i, $1 / 1e6, $2 }'
