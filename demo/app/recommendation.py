# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""recommendation: four other products of the catalogue, the same
category first."""
from shop import ok, serve


def recommend(parts, query, body):
    pid = int(parts[0]) if parts and parts[0].isdigit() else 0
    products = ok("catalogue", "GET", "/products")
    this = next((p for p in products if p["id"] == pid), None)
    others = [p for p in products if p["id"] != pid]
    others.sort(key=lambda p: (this is None or p["category"] != this["category"], (p["id"] * 7 + pid) % 13))
    return 200, [p["id"] for p in others[:4]]


serve({("GET", "recommend"): recommend})
