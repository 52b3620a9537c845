# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""currency: converts prices (cents, EUR) with fixed rates."""
from shop import serve

RATES = {"EUR": 1.0, "USD": 1.08, "GBP": 0.86, "JPY": 162.3, "CHF": 0.95}


def rates(parts, query, body):
    return 200, RATES


def convert(parts, query, body):
    to = query.get("to", "EUR")
    if to not in RATES:
        return 400, {"error": f"unknown currency {to}"}
    cents = int(query.get("cents", "0"))
    return 200, {"currency": to, "cents": round(cents * RATES[to])}


serve({("GET", "rates"): rates, ("GET", "convert"): convert})
