#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""How the bio tests judge bytes a dd wrote or read against what it asked.

The kernel runs no program for some completions (in an interrupt on top of
the machine's agent, pid 1, see docs/design/bio.md); kmond counts
each such request in bio's `lost`. So bytes short of the dd's total pass
when a request for every MiB begun of what is missing (dd's requests are
at most 1 MiB) is counted lost; bytes over it never pass.

As a command:
  bio_short.py FILE WANT GOT WHAT
exits 1, after a line naming WHAT, unless GOT bytes (records.py --sum
bytes of the records meant) fit WANT in that sense, with the lost
requests of FILE's stats."""
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
    ap.add_argument("got", type=int)
    ap.add_argument("what")
    a = ap.parse_args()
    lost = lost_ios(json.loads(line) for line in open(a.file, encoding="utf-8"))
    ok = fits(a.got, a.want, lost)
    print(f"{'ok' if ok else 'FAIL'}: {a.what}: {a.got} of {a.want} bytes, "
          f"{short_mib(a.got, a.want)} MiB short, {lost} I/Os lost")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
