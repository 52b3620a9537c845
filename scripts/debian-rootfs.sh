#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A Debian bookworm root file system from Debian's packages (mmdebstrap,
# minbase), as a tarball for `podman import`: the base of kmond's image
# (scripts/image.sh) and the demo shop's image (demo/image.sh). No
# documentation, manuals or translations, here and in every package
# installed later (dpkg's config keeps the exclusions).
#   scripts/debian-rootfs.sh TAR [PACKAGE,...]     (as root)
set -euo pipefail
command -v mmdebstrap >/dev/null || "$(dirname "$0")/install-deps.sh" image
mmdebstrap --quiet --variant=minbase --mode=root ${2:+--include="$2"} \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	bookworm "$1"
