#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-view flame: folded output and SVG frames match the input totals,
# filters, stdin (tests/lib/view_check.py flame).
source "$(dirname "$0")/../lib/kmond.sh"

python3 "$(dirname "$0")/../lib/view_check.py" "$BUILD/kmon-view" "$WORK" flame ||
	fail "kmon-view flame"
