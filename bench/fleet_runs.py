# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The runs fleet_rounds wrote (bench/fleet_lib.sh: $work/runs.jsonl, a
JSON line per member of each group), gathered by group: read by
fleet_table and by bench/fleet.sh's table of both stages."""
import collections
import json


def by_group(path):
    """(members, each member's line) of every group, in the file's order."""
    groups = collections.defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            groups[(r["members"], r["group"])].append(r)
    return [(n, ms) for (n, _), ms in groups.items()]
