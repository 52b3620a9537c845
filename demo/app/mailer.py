# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""email (mailer.py: email.py would hide the standard library's email package): renders the order confirmation and queues it in Redis (the
last 1000 are kept)."""
from shop import Redis, serve

redis = Redis()
TEMPLATE = "Dear {user},\nyour order {order} ({cents} cents) ships as {tracking}.\n"


def send(parts, query, body):
    text = TEMPLATE.format(**{k: body.get(k, "?") for k in ("user", "order", "cents", "tracking")})
    redis("LPUSH", "outbox", text)
    redis("LTRIM", "outbox", 0, 999)
    return 200, {"queued": True}


serve({("POST", "send"): send})
