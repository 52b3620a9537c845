#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-view topology: the DOT holds exactly the input edges with requests/s
# and p95; the SVG through dot has them all.
source "$(dirname "$0")/../lib/kmond.sh"

python3 "$(dirname "$0")/../lib/view_check.py" "$BUILD/kmon-view" "$WORK" topology ||
	fail "kmon-view topology"
