#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Counts the atomics of loaded BPF programs, read with bpf() itself
# (Debian's bpftool dumps no JIT image without libbfd): per program, the
# atomic instructions after the verifier that fetch (add with BPF_FETCH,
# xchg, cmpxchg: the ones kmond relies on to order its stores) and those
# that do not (a plain add); on arm64 also, in its JIT image, the
# instructions that order both ways (LSE with acquire and release:
# LDADDAL, SWPAL, CASAL...; or an exclusive store-release with a DMB ISH
# right after it) and the LSE ones that order nothing (STADD).
#   jit_atomics.py PROG_ID...
# Prints one line per program: NAME.ID fetching=N plain=N [ordered=N unordered=N]
import ctypes
import os
import platform
import struct
import sys

BPF_STX = 0x03
BPF_ATOMIC = 0xC0
BPF_FETCH = 0x01
DMB_ISH = 0xD5033BBF
SYS_BPF = {"x86_64": 321, "aarch64": 280}[platform.machine()]
BPF_PROG_GET_FD_BY_ID = 13
BPF_OBJ_GET_INFO_BY_FD = 15

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class ProgInfo(ctypes.Structure):
    """The head of struct bpf_prog_info (uapi/linux/bpf.h), to its name."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("id", ctypes.c_uint32),
        ("tag", ctypes.c_uint8 * 8),
        ("jited_prog_len", ctypes.c_uint32),
        ("xlated_prog_len", ctypes.c_uint32),
        ("jited_prog_insns", ctypes.c_uint64),
        ("xlated_prog_insns", ctypes.c_uint64),
        ("load_time", ctypes.c_uint64),
        ("created_by_uid", ctypes.c_uint32),
        ("nr_map_ids", ctypes.c_uint32),
        ("map_ids", ctypes.c_uint64),
        ("name", ctypes.c_char * 16),
    ]


def bpf(cmd, attr):
    ret = libc.syscall(SYS_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if ret < 0:
        raise OSError(ctypes.get_errno(), f"bpf({cmd}): {os.strerror(ctypes.get_errno())}")
    return ret


def prog_info(fd, info):
    attr = (ctypes.c_uint64 * 2)(fd | ctypes.sizeof(info) << 32, ctypes.addressof(info))
    bpf(BPF_OBJ_GET_INFO_BY_FD, attr)


def images(prog_id):
    """(name, xlated, jited) of a loaded program."""
    fd = bpf(BPF_PROG_GET_FD_BY_ID, (ctypes.c_uint32 * 4)(prog_id))
    try:
        info = ProgInfo()
        prog_info(fd, info)
        xlated = ctypes.create_string_buffer(info.xlated_prog_len)
        jited = ctypes.create_string_buffer(info.jited_prog_len)
        want = ProgInfo(
            jited_prog_len=info.jited_prog_len,
            xlated_prog_len=info.xlated_prog_len,
            jited_prog_insns=ctypes.addressof(jited),
            xlated_prog_insns=ctypes.addressof(xlated),
        )
        prog_info(fd, want)
        return info.name.decode(), xlated.raw, jited.raw
    finally:
        os.close(fd)


def bpf_atomics(data):
    """(fetching, plain) atomic instructions in an xlated program."""
    fetching = plain = 0
    for off in range(0, len(data) - 7, 8):
        code = data[off]
        imm = struct.unpack_from("<i", data, off + 4)[0]
        if code & 0x07 != BPF_STX or code & 0xE0 != BPF_ATOMIC:
            continue
        if imm & BPF_FETCH:  # fetch ops, xchg (0xe1) and cmpxchg (0xf1)
            fetching += 1
        else:
            plain += 1
    return fetching, plain


def arm64_atomics(data):
    """(ordered, unordered) atomic instructions in an arm64 JIT image."""
    words = [w for (w,) in struct.iter_unpack("<I", data[: len(data) // 4 * 4])]
    ordered = unordered = 0
    for i, w in enumerate(words):
        if w & 0x3F200C00 == 0x38200000:  # LD<op>, SWP (LSE)
            acquire, release = w >> 23 & 1, w >> 22 & 1
            if acquire and release:
                ordered += 1
            elif not acquire and not release:
                unordered += 1
        elif w & 0x3FA07C00 == 0x08A07C00:  # CAS (LSE)
            if w >> 22 & 1 and w >> 15 & 1:
                ordered += 1
            else:
                unordered += 1
        elif w & 0x3FE07C00 == 0x08007C00:  # STXR, STLXR
            # the exclusive loop ends in a CBNZ; a DMB ISH after it orders
            if w >> 15 & 1 and DMB_ISH in words[i + 1 : i + 4]:
                ordered += 1
            else:
                unordered += 1
    return ordered, unordered


def main():
    for prog_id in sorted(set(map(int, sys.argv[1:]))):  # a link holds one too
        name, xlated, jited = images(prog_id)
        fetching, plain = bpf_atomics(xlated)
        line = f"{name}.{prog_id} fetching={fetching} plain={plain}"
        if platform.machine() == "aarch64":
            ordered, unordered = arm64_atomics(jited)
            line += f" ordered={ordered} unordered={unordered}"
        print(line)


if __name__ == "__main__":
    main()
