#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks the tcp records of tls_client.py's requests to an HTTPS server.

    tls_check.py plain OUT.json PORT CONNS REQUESTS SNI PROTOCOL EXPECT...
    tls_check.py cipher OUT.json PORT

plain: TLS read in plaintext; each side has exactly CONNS x REQUESTS
records, REQUESTS per connection, protocol PROTOCOL, tls true, tls_sni
SNI ("-": none), and each request's outcome as its EXPECT says (the client cycles
through the list as tls_client.py does):
STATUS/SERVER_ERROR/CLIENT_ERROR/METHOD/ROUTE, "-" for a field absent
("404/false/true/GET//missing/{id}": the route is the rest).
The server's last endpoint record names PROTOCOL too.
cipher: TLS not read; each side's records say protocol tls and carry no
tls field."""
import collections
import json
import sys


def records(path, port, kind="tcp"):
    return [r for r in map(json.loads, open(path)) if r["kind"] == kind and
            port in (r.get("lport"), r.get("rport"), r.get("port"))]


def expected(spec, side):
    """The (status, error, method, route) EXPECT says for side."""
    status, server_err, client_err, method, route = spec.split("/", 4)
    err = server_err if side == "server" else client_err
    none = lambda v: None if v == "-" else v
    status = none(status)
    if status is not None and status.isdigit():
        status = int(status)
    err = None if err == "-" else err == "true"
    return (status, err, none(method), none(route))


def check_plain(rs, conns, reqs, sni, proto, specs):
    errors = []
    for side in ("server", "client"):
        mine = [r for r in rs if r["side"] == side]
        if len(mine) != conns * reqs:
            errors.append(f"{side}: {len(mine)} records, want {conns * reqs}")
            continue
        per_conn = collections.Counter(
            r["lport"] if side == "client" else r["rport"] for r in mine)
        if sorted(per_conn.values()) != [reqs] * conns:
            errors.append(f"{side}: requests per connection "
                          f"{sorted(per_conn.values())}")
        bad = [r for r in mine if r["protocol"] != proto
               or r.get("tls") is not True or r.get("tls_sni") != sni]
        if bad:
            errors.append(f"{side}: {len(bad)} records not {proto}, tls, "
                          f"{sni}: {bad[0]}")
        got = collections.Counter((r.get("status"), r.get("error"),
                                   r.get("method"), r.get("route"))
                                  for r in mine)
        want = collections.Counter(
            expected(specs[(i % reqs) % len(specs)], side)
            for i in range(conns * reqs))
        if got != want:
            errors.append(f"{side}: outcomes {dict(got)}, want {dict(want)}")
    return errors


def check_cipher(rs):
    errors = []
    for side in ("server", "client"):
        mine = [r for r in rs if r["side"] == side]
        seen = collections.Counter((r["protocol"], r.get("tls")) for r in mine)
        if not mine or set(seen) != {("tls", None)}:
            errors.append(f"{side}: {dict(seen)}, want tls only")
    return errors


def main():
    mode, path, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rs = records(path, port)
    if mode == "plain":
        conns, reqs, sni = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
        sni = None if sni == "-" else sni
        errors = check_plain(rs, conns, reqs, sni, sys.argv[7], sys.argv[8:])
        # the server's endpoint: named by the plaintext, not `tls`
        eps = records(path, port, "endpoint")
        if not eps or eps[-1]["protocol"] != sys.argv[7]:
            errors.append("endpoint: " + str([e["protocol"] for e in eps]))
    else:
        errors = check_cipher(rs)
    if errors:
        sys.exit(f"{path}: " + "\n".join(errors))
    print(f"ok: {path}: {len(rs)} records")


main()
