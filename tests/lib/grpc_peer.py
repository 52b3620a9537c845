#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A gRPC server and client (Debian's python3-grpcio, grpc-core; no
generated code: the messages are raw bytes), for the tests of gRPC's
outcomes. Debian's own python3, where python3-grpcio is installed.

grpc_peer.py serve PORT
    serves kmon.Test on 127.0.0.1:PORT (h2c), prints "serving" once up:
    Ok answers, Missing fails NOT_FOUND, Fail fails INTERNAL
grpc_peer.py call PORT METHOD COUNT
    COUNT calls of METHOD one after the other on one channel (one
    connection); prints the status codes' counts, "CODE:N ..."
"""
import collections
import sys
from concurrent import futures

import grpc


def ok(req, ctx):
    return b"ok:" + req


def missing(req, ctx):
    ctx.abort(grpc.StatusCode.NOT_FOUND, "no such thing")


def fail(req, ctx):
    ctx.abort(grpc.StatusCode.INTERNAL, "it broke")


def serve(port):
    handlers = {name: grpc.unary_unary_rpc_method_handler(fn)
                for name, fn in (("Ok", ok), ("Missing", missing),
                                 ("Fail", fail))}
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("kmon.Test", handlers),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    print("serving", flush=True)
    server.wait_for_termination()


def call(port, method, count):
    codes = collections.Counter()
    # straight to the server, whatever http_proxy says
    with grpc.insecure_channel(f"127.0.0.1:{port}",
                               options=[("grpc.enable_http_proxy", 0)]) as channel:
        stub = channel.unary_unary(f"/kmon.Test/{method}")
        for i in range(count):
            try:
                stub(b"%d" % i, timeout=10)
                codes[0] += 1
            except grpc.RpcError as e:
                codes[e.code().value[0]] += 1
    print(" ".join(f"{k}:{v}" for k, v in sorted(codes.items())))


if sys.argv[1] == "serve":
    serve(int(sys.argv[2]))
else:
    call(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
