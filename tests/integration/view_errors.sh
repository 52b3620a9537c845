#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-view errors: bad input (not JSON, missing fields, wrong types, empty)
# gives FILE:LINE messages, exit 2 and no output file.
source "$(dirname "$0")/../lib/kmond.sh"

python3 "$(dirname "$0")/../lib/view_check.py" "$BUILD/kmon-view" "$WORK" errors ||
	fail "kmon-view errors"
