# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks that includes run down the layers of the tree (docs/layout.md, "The layers"):
a file includes headers of its own folder, of lower layers, and bpf/ ABI
headers; never a .c file, never a layer above or beside its own.
Prints each offending include; exits 1 if there is any."""
import os
import re
import sys

# folder -> rank; a file may include a folder of lower rank, or its own.
RANKS = {
    "user/lib": 1,
    "user/config": 2,
    "user/loader": 3,
    "user/sym": 3,
    "user/provider": 4,
    "exporters": 4,
    "user/collectors": 5,
    "consumers": 5,
    "user/daemon": 6,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer(path):
    best = None
    for folder in RANKS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def main(root):
    bad = 0
    for top in ("user", "exporters", "consumers", "bpf"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                src = open(os.path.join(root, path), encoding="utf-8").read()
                for inc in INCLUDE.findall(src):
                    # -Iuser first, then -I. (Makefile)
                    if os.path.exists(os.path.join(root, "user", inc)):
                        inc = "user/" + inc
                    why = judge(path, inc)
                    if why:
                        print(f"{path}: #include \"{inc}\": {why}")
                        bad += 1
    print(f"{bad} include(s) against the layers")
    return 1 if bad else 0


def judge(path, inc):
    if inc.endswith(".c"):
        return "includes a .c file"
    if path.startswith("bpf/"):
        # beside the file, else in bpf/ (-Ibpf): never outside bpf/
        near = os.path.normpath(os.path.join(os.path.dirname(path), inc))
        if not near.startswith("bpf/") and \
                os.path.normpath("bpf/" + inc).startswith("bpf/"):
            near = os.path.normpath("bpf/" + inc)
        if not near.startswith("bpf/"):
            return "a bpf/ file includes outside bpf/"
        return None
    if inc.startswith("../"):
        return "a relative path out of its folder"
    if inc.startswith("bpf/") or inc.endswith(".skel.h") or "/" not in inc:
        return None  # ABI headers, generated headers, its own folder
    mine, theirs = layer(path), layer(inc)
    if theirs is None:
        return "not a layer of the tree"
    if mine == theirs:
        return None
    if RANKS[theirs] >= RANKS[mine]:
        return f"{mine} (layer {RANKS[mine]}) may not include {theirs} (layer {RANKS[theirs]})"
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
