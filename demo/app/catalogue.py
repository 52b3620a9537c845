# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""catalogue: products from PostgreSQL through memcached. A product is
cached for a few seconds: most reads hit the cache, the others miss and
query the database (the cache-miss path)."""
from shop import Memcached, Postgres, serve

TTL = 3
db = Postgres()
cache = Memcached()
COLUMNS = ("id", "name", "category", "price_cents")


def all_products(parts, query, body):
    if parts:
        return one_product(parts, query, body)
    products = cache.get("products")
    if products is None:
        rows = db.query("SELECT id, name, category, price_cents FROM products ORDER BY id")
        products = [dict(zip(COLUMNS, r)) for r in rows]
        cache.set("products", products, TTL)
    return 200, products


def one_product(parts, query, body):
    pid = int(parts[0]) if parts[0].isdigit() else -1
    key = f"product:{pid}"
    item = cache.get(key)
    if item is None:
        rows = db.query("SELECT id, name, category, price_cents FROM products WHERE id = %s", (pid,))
        if not rows:
            return 404, {"error": f"no product {parts[0]}"}
        item = dict(zip(COLUMNS, rows[0]))
        cache.set(key, item, TTL)
    return 200, item


serve({("GET", "products"): all_products})
