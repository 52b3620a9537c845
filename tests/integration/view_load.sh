#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-view load: a panel per service with its measured busy and occupancy
# and its estimated rho per tier over time, every point read back; bad
# input refused.
source "$(dirname "$0")/../lib/kmond.sh"

python3 "$(dirname "$0")/../lib/view_load_check.py" "$BUILD/kmon-view" "$WORK" ||
	fail "kmon-view load"
