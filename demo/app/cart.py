# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cart: each user's cart, a Redis hash of product id -> quantity."""
from shop import Redis, serve

redis = Redis()


def get_cart(parts, query, body):
    flat = redis("HGETALL", f"cart:{parts[0]}") or []
    return 200, {flat[i]: int(flat[i + 1]) for i in range(0, len(flat), 2)}


def add(parts, query, body):
    key = f"cart:{parts[0]}"
    n = redis("HINCRBY", key, int(body.get("product", 0)), int(body.get("quantity", 1)))
    redis("EXPIRE", key, 3600)
    return 200, {"product": body.get("product"), "quantity": n}


def empty(parts, query, body):
    return 200, {"removed": redis("DEL", f"cart:{parts[0]}")}


serve({("GET", "cart"): get_cart, ("POST", "cart"): add, ("DELETE", "cart"): empty})
