#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Draws bench/fleet.sh's throughput against members as a small SVG.

  fleet_svg.py OUT.svg [--title TITLE] MEMBERS:GROUP_RATE:PER_MEMBER:PER_CPU_S ...

Bars: records/s of the group (and of each member); a line: records per
CPU-second, the rate a group would reach with a core per member."""
import sys

args = sys.argv[2:]
title = "kmon-trace --fleet: tcp records/s against members"
if args[:1] == ["--title"]:
    title, args = args[1], args[2:]
out, rows = sys.argv[1], [tuple(float(x) for x in a.split(":")) for a in args]
W, H, L, B = 460, 260, 70, 40
top = max(max(r[1], r[3] * r[0]) for r in rows) * 1.15
bw = (W - L - 20) / len(rows)


def y(v):
    return H - B - (H - B - 20) * v / top


parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         'font-family="sans-serif" font-size="11">',
         f'<text x="{W / 2}" y="14" text-anchor="middle">{title} '
         '(2 shared cores)</text>',
         f'<line x1="{L}" y1="{H - B}" x2="{W - 10}" y2="{H - B}" stroke="black"/>',
         f'<line x1="{L}" y1="20" x2="{L}" y2="{H - B}" stroke="black"/>']
for i in range(5):
    v = top * i / 4
    parts.append(f'<text x="{L - 4}" y="{y(v) + 4:.0f}" text-anchor="end">'
                 f'{v / 1000:.0f}k</text>')
line = []
for i, (n, group, member, cpu) in enumerate(rows):
    x = L + 10 + i * bw
    parts.append(f'<rect x="{x:.0f}" y="{y(group):.0f}" width="{bw * 0.35:.0f}" '
                 f'height="{H - B - y(group):.0f}" fill="#4a7ab5"/>')
    parts.append(f'<rect x="{x + bw * 0.37:.0f}" y="{y(member):.0f}" '
                 f'width="{bw * 0.35:.0f}" height="{H - B - y(member):.0f}" fill="#9fc0e8"/>')
    parts.append(f'<text x="{x + bw * 0.36:.0f}" y="{H - B + 14}" '
                 f'text-anchor="middle">{n:.0f} member{"s" if n > 1 else ""}</text>')
    line.append(f'{x + bw * 0.36:.0f},{y(cpu * n):.0f}')
parts.append(f'<polyline points="{" ".join(line)}" fill="none" stroke="#c0392b" '
             'stroke-width="2" stroke-dasharray="4 3"/>')
lx = W - 200
for color, label, dy in (("#4a7ab5", "group, records/s", 0),
                         ("#9fc0e8", "per member, records/s", 14),
                         ("#c0392b", "records/CPU-s x members", 28)):
    parts.append(f'<rect x="{lx}" y="{26 + dy}" width="10" height="8" fill="{color}"/>')
    parts.append(f'<text x="{lx + 14}" y="{34 + dy}">{label}</text>')
parts.append("</svg>")
open(out, "w").write("\n".join(parts) + "\n")
