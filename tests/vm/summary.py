#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The table make vmtest ends with, from the files tests/vm/job.sh left
# per kernel: per collector, the attach kmond --probe chose (hooks on
# another attach than the collector's first named in brackets) and its
# tests passed/failed/skipped (a test belongs to the collector its name
# starts with, after container_; proto_ and occupancy_ to tcp; the rest
# count as "other"), then the skip reasons and the
# failures.
#   tests/vm/summary.py RESULTS_DIR KERNEL...
import os
import re
import sys

COLLECTORS = ["provider", "syscall", "drop", "counters", "offcpu", "bio", "tcp"]


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def attaches(probe):
    """collector -> [(hook, attach)] in probe order."""
    by = {}
    for line in probe.splitlines():
        parts = line.split(None, 3)
        if len(parts) < 3 or parts[0] not in COLLECTORS:
            continue
        attach = parts[2].rstrip(";")
        by.setdefault(parts[0], []).append((parts[1], attach))
    return by


def describe(hooks):
    if not hooks:
        return "?"
    first = next((a for _, a in hooks if a != "absent"), hooks[0][1])
    odd = [f"{h}:{a}" for h, a in hooks if a != first]
    return first + (f" [{', '.join(odd)}]" if odd else "")


def results(tests):
    """group -> [passed, failed, skipped], skip lines, fail names."""
    counts, skips, fails = {}, [], []
    for line in tests.splitlines():
        m = re.match(r"(PASS|FAIL|SKIP) (\S+)\s+\d+s(?:\s+(.*))?$", line)
        if not m:
            continue
        name = m.group(2).split("/")[-1]
        group = name.split("_")[0]
        # container_tcp is tcp's; proto_ and occupancy_ read tcp records
        if group == "container" and "_" in name:  # not unit/container
            group = name.split("_")[1]
        group = {"proto": "tcp", "occupancy": "tcp"}.get(group, group)
        if group not in COLLECTORS:
            group = "other"
        c = counts.setdefault(group, [0, 0, 0])
        c["PFS".index(m.group(1)[0])] += 1
        if m.group(1) == "SKIP":
            skips.append(f"{name}: {m.group(3)}")
        elif m.group(1) == "FAIL":
            fails.append(name)
    return counts, skips, fails


def main():
    root, kernels = sys.argv[1], sys.argv[2:]
    notes = []
    print()
    print(f"{'kernel':<28} {'collector':<9} {'attach':<44} {'pass':>4} {'fail':>4} {'skip':>4}")
    for k in kernels:
        d = os.path.join(root, k)
        release = read(os.path.join(d, "uname")).strip() or "(did not boot)"
        secs = read(os.path.join(d, "seconds")).strip()
        by = attaches(read(os.path.join(d, "probe.txt")))
        counts, skips, fails = results(read(os.path.join(d, "tests.txt")))
        label = f"{k} {release}" if k != release else k
        total = [0, 0, 0]
        for g in COLLECTORS + ["other"]:
            c = counts.get(g, [0, 0, 0])
            total = [a + b for a, b in zip(total, c)]
            attach = describe(by.get(g, [])) if g != "other" else ""
            print(f"{label:<28} {g:<9} {attach:<44} {c[0]:>4} {c[1]:>4} {c[2]:>4}")
            label = ""
        t = f"{int(secs) // 60}m{int(secs) % 60:02d}s" if secs.isdigit() else "?"
        print(f"{'':<28} {'total':<9} {'wall ' + t:<44} {total[0]:>4} {total[1]:>4} {total[2]:>4}")
        # run.sh leaves rc in a guest's share once its command ended
        if k != "host" and not os.path.exists(os.path.join(d, "rc")):
            notes.append(f"{k}: FAILED the guest did not finish (see {d}/console.log)")
        notes += [f"{k}: skipped {s}" for s in skips]
        notes += [f"{k}: FAILED {f}" for f in fails]
    if notes:
        print()
        print("\n".join(notes))


main()
