# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""shipping: quotes a price by weight and distance, and ships an order
(a tracking number). The tier the demo slows (its fault switch)."""
import hashlib

from shop import serve


def quote(parts, query, body):
    items = int(body.get("items", 1))
    zone = sum(map(ord, body.get("country", "FR"))) % 4
    return 200, {"cents": 490 + 120 * items + 300 * zone}


def ship(parts, query, body):
    digest = hashlib.sha256(str(body.get("order")).encode()).hexdigest()
    return 200, {"tracking": digest[:12].upper()}


serve({("POST", "quote"): quote, ("POST", "ship"): ship})
