#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-view heatmap: the cells (time step x power-of-two latency row) and
# their counts match offcpu, offcpu_hist, bio and bio_hist inputs; axes, legend.
source "$(dirname "$0")/../lib/kmond.sh"

python3 "$(dirname "$0")/../lib/view_check.py" "$BUILD/kmon-view" "$WORK" heatmap ||
	fail "kmon-view heatmap"
