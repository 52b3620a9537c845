#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Decodes a PNG with zlib alone (8-bit RGB or RGBA, not interlaced, as
Chromium writes screenshots) and prints "WIDTH HEIGHT COLOURS MAJORITY":
the number of distinct pixel colours and the share of the most common one
(the background), so a test can tell a drawn picture from a blank page.
With --pixels R,G,B it prints how many pixels have exactly that colour
instead (an SVG fill, to find a given shape in the screenshot).

png_colors.py FILE.png [--pixels R,G,B]"""
import struct
import sys
import zlib


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(kind, line, prev, bpp):
    if kind == 0:
        return line
    out = bytearray(line)
    n = len(out)
    if kind == 1:
        for i in range(bpp, n):
            out[i] = (out[i] + out[i - bpp]) & 0xff
    elif kind == 2:
        for i in range(n):
            out[i] = (out[i] + prev[i]) & 0xff
    elif kind == 3:
        for i in range(n):
            left = out[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + ((left + prev[i]) >> 1)) & 0xff
    elif kind == 4:
        for i in range(n):
            left = out[i - bpp] if i >= bpp else 0
            up_left = prev[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + paeth(left, prev[i], up_left)) & 0xff
    else:
        sys.exit(f"bad PNG filter {kind}")
    return out


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(
                ">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit(f"{path}: unsupported PNG (depth {depth}, type {ctype})")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    prev = bytearray(stride)
    counts = {}
    for y in range(height):
        off = y * (stride + 1)
        line = unfilter(raw[off], raw[off + 1:off + 1 + stride], prev, bpp)
        for x in range(0, stride, bpp):
            px = bytes(line[x:x + bpp])
            counts[px] = counts.get(px, 0) + 1
        prev = line
    return width, height, counts


def main():
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and
                                       sys.argv[2] != "--pixels"):
        sys.exit(__doc__)
    width, height, counts = decode(sys.argv[1])
    if len(sys.argv) == 4:
        rgb = bytes(int(v) for v in sys.argv[3].split(","))
        print(sum(n for px, n in counts.items() if px[:3] == rgb))
        return
    print(width, height, len(counts),
          f"{max(counts.values()) / (width * height):.3f}")


main()
