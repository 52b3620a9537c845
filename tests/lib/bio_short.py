#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""How the bio tests judge bytes a dd wrote or read against what it asked.

The kernel runs no program for some completions (in an interrupt on top of
the machine's agent, pid 1, see the README's bio section); kmond counts
each such request in bio's `lost`. So bytes short of the dd's total pass
when a request for every MiB begun of what is missing (dd's requests are
at most 1 MiB) is counted lost; bytes over it never pass.

As a command:
  bio_short.py FILE WANT [--kind K] [--where key=value ...]
sums `bytes` of the records selected (kind bio by default) and exits 1
unless they fit WANT in that sense."""
import argparse
import json
import sys

MIB = 1 << 20


def lost_ios(recs):
    """The bio collector's lost requests, from the last stats record."""
    return max((r["collectors"]["bio"]["lost"] for r in recs
                if r.get("kind") == "stats"), default=0)


def short_mib(nbytes, want):
    """Requests missing from NBYTES against WANT: at least one for each
    MiB begun (a request is at most 1 MiB)."""
    return -(-max(0, want - nbytes) // MIB)


def fits(nbytes, want, lost, slack=0.0):
    """NBYTES is WANT (within SLACK, a fraction), or short of it by no
    more requests than LOST."""
    if nbytes > want * (1 + slack):
        return False
    return nbytes >= want * (1 - slack) or short_mib(nbytes, want) <= lost


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("want", type=int)
    ap.add_argument("--kind", default="bio")
    ap.add_argument("--where", action="append", default=[])
    a = ap.parse_args()
    recs = [json.loads(line) for line in open(a.file, encoding="utf-8")]
    conds = [w.split("=", 1) for w in a.where]
    mine = [r for r in recs if r["kind"] == a.kind and
            all(str(r.get(k)) == v for k, v in conds)]
    nbytes = sum(r["bytes"] for r in mine)
    lost = lost_ios(recs)
    ok = fits(nbytes, a.want, lost)
    print(f"{'ok' if ok else 'FAIL'}: {a.kind} bytes {' '.join(a.where)}: "
          f"{nbytes} of {a.want}, {short_mib(nbytes, a.want)} MiB short, "
          f"{lost} I/Os lost")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
