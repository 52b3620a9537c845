#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# outcome_http with outcomes turned on by a reload: the heads of what
# plain connections send read at the send call (see outcome_http.sh).
OUTCOMES_BY_RELOAD=1 exec bash "$(dirname "$0")/outcome_http.sh"
