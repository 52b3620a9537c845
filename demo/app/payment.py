# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""payment: charges a card. A card failing the Luhn check or ending in
0002 is declined (402); one charge in PAYMENT_UNAVAILABLE (default 10)
finds the card processor unavailable (503): the tier's own errors."""
import itertools
import os

from shop import serve

UNAVAILABLE_EVERY = int(os.environ.get("PAYMENT_UNAVAILABLE", "10"))
charges = itertools.count(1)


def luhn_ok(number):
    digits = [int(d) for d in number if d.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return len(digits) >= 12 and total % 10 == 0


def charge(parts, query, body):
    card = str(body.get("card", ""))
    if not luhn_ok(card) or card.endswith("0002"):
        return 402, {"error": "card declined"}
    if next(charges) % UNAVAILABLE_EVERY == 0:
        return 503, {"error": "card processor unavailable"}
    return 200, {"transaction": f"tx-{card[-4:]}-{body.get('cents', 0)}"}


serve({("POST", "charge"): charge})
