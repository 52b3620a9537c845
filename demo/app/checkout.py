# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""checkout: places an order. In sequence: the cart, then every item's
price (in parallel), the total in the user's currency, a shipping quote,
the payment; once paid, in parallel: the order into PostgreSQL, the
shipment, the confirmation email, the emptied cart and the order's event
on the Kafka topic "orders" (for whoever follows orders). A declined card
is the user's error (402); a payment tier that fails is this tier's
(502)."""
import itertools
import os

from shop import Kafka, Postgres, http_call, ok, parallel, serve

db = Postgres()
bus = Kafka()
orders = itertools.count(1)
HOST = os.uname().nodename


def checkout(parts, query, body):
    user = parts[0] if parts else "anon"
    cart = ok("cart", "GET", f"/cart/{user}")
    if not cart:
        return 400, {"error": "empty cart"}
    prices = parallel(*[lambda pid=pid: ok("catalogue", "GET", f"/products/{pid}")
                        for pid in cart])
    cents = sum(p["price_cents"] * n for p, n in zip(prices, cart.values()))
    currency = body.get("currency", "EUR")
    total = ok("currency", "GET", f"/convert?cents={cents}&to={currency}")
    ship_quote = ok("shipping", "POST", "/quote",
                    {"items": sum(cart.values()), "country": body.get("country", "FR")})
    amount = total["cents"] + ship_quote["cents"]
    status, paid = http_call("payment", "POST", "/charge", {"card": body.get("card"), "cents": amount})
    if status == 402:
        return 402, paid
    if status != 200:
        return 502, {"error": "payment failed", "payment": paid}
    order = f"{HOST}-{next(orders)}"
    _, shipped, _, _, _ = parallel(
        lambda: db.query("INSERT INTO orders (id, customer, cents, currency) VALUES (%s, %s, %s, %s)",
                         (order, user, amount, currency)),
        lambda: ok("shipping", "POST", "/ship", {"order": order}),
        lambda: ok("email", "POST", "/send",
                   {"user": user, "order": order, "cents": amount, "tracking": "pending"}),
        lambda: ok("cart", "DELETE", f"/cart/{user}"),
        lambda: bus.publish("orders", order, {"user": user, "cents": amount, "currency": currency}),
    )
    return 200, {"order": order, "cents": amount, "currency": currency,
                 "tracking": shipped["tracking"], "transaction": paid["transaction"]}


serve({("POST", "checkout"): checkout})
