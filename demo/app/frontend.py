# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""frontend: the pages behind nginx. Each page fans out to the tiers
that make it, in parallel where the parts are independent, in sequence
where one needs the other's answer."""
from shop import http_call, ok, parallel, serve


def home(parts, query, body):
    user = query.get("user", "anon")
    products, ad, cart, rates = parallel(
        lambda: ok("catalogue", "GET", "/products"),
        lambda: ok("ad", "GET", "/ad"),
        lambda: ok("cart", "GET", f"/cart/{user}"),
        lambda: ok("currency", "GET", "/rates"),
    )
    return 200, {"products": products[:6], "ad": ad, "cart": cart, "rates": rates}


def product(parts, query, body):
    pid = parts[0] if parts else "0"
    status, item = http_call("catalogue", "GET", f"/products/{pid}")
    if status != 200:
        return status, item
    currency = query.get("currency", "EUR")
    recs, ad, price = parallel(
        lambda: ok("recommendation", "GET", f"/recommend/{pid}"),
        lambda: ok("ad", "GET", f"/ad?category={item['category']}"),
        lambda: ok("currency", "GET", f"/convert?cents={item['price_cents']}&to={currency}"),
    )
    return 200, {"product": item, "recommended": recs, "ad": ad, "price": price}


def add_to_cart(parts, query, body):
    user = parts[0] if parts else "anon"
    status, item = http_call("catalogue", "GET", f"/products/{body.get('product', 0)}")
    if status != 200:
        return status, item
    return http_call("cart", "POST", f"/cart/{user}", body)


def checkout(parts, query, body):
    user = parts[0] if parts else "anon"
    return http_call("checkout", "POST", f"/checkout/{user}", body)


serve({("GET", ""): home, ("GET", "product"): product,
       ("POST", "cart"): add_to_cart, ("POST", "checkout"): checkout})
