#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Includes run down the layers (daemon -> collectors -> provider, sym,
# exporters -> loader, config -> lib; bpf/ stands alone): tests/lib/layers.py.
source "$(dirname "$0")/../lib/kmond.sh"
python3 "$(dirname "$0")/../lib/layers.py" "$(dirname "$0")/../.." ||
	fail "an include climbs the layers"
