# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ad: an advertisement for a category, or any."""
import itertools

from shop import serve

ADS = {
    "kitchen": ["Mugs 2 for 1", "A kettle that whistles in tune"],
    "clothing": ["Sunglasses: summer sale", "Socks that match"],
    "garden": ["Terracotta pots, hand made"],
    "books": ["The kernel, explained"],
}
turn = itertools.count()


def ad(parts, query, body):
    pool = ADS.get(query.get("category")) or [a for ads in ADS.values() for a in ads]
    return 200, {"text": pool[next(turn) % len(pool)]}


serve({("GET", "ad"): ad})
