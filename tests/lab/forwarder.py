"""Loopback → lab namespace TCP forwarder.

Listens on 127.0.0.1 only; each accepted connection is relayed to a guest's sshd
inside the lab's network namespace. The outgoing socket is created while this
thread is switched into that namespace (``setns``), so nothing is routed through
the host's own network and the lab stays unreachable from outside loopback.

Usage: python -m tests.lab.forwarder NETNS NAME=IP:DPORT [NAME=IP:DPORT ...]
Binds a free loopback port per NAME and prints "FORWARDER-READY NAME=PORT ...".
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys


def _socket_in_netns(netns: str) -> socket.socket:
    with open(f"/run/netns/{netns}") as target, open("/proc/self/ns/net") as home:
        os.setns(target.fileno(), os.CLONE_NEWNET)
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        finally:
            os.setns(home.fileno(), os.CLONE_NEWNET)
    sock.setblocking(False)
    return sock


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


def _handler(netns: str, ip: str, port: int):  # type: ignore[no-untyped-def]
    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        sock = _socket_in_netns(netns)
        try:
            await asyncio.wait_for(asyncio.get_running_loop().sock_connect(sock, (ip, port)), 10)
        except (OSError, TimeoutError):
            sock.close()
            client_w.close()
            return
        guest_r, guest_w = await asyncio.open_connection(sock=sock)
        await asyncio.gather(_pipe(client_r, guest_w), _pipe(guest_r, client_w))

    return handle


async def serve(netns: str, routes: list[tuple[str, str, int]]) -> None:
    servers = [await asyncio.start_server(_handler(netns, ip, dport), "127.0.0.1", 0) for _, ip, dport in routes]
    ports = [srv.sockets[0].getsockname()[1] for srv in servers]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print("FORWARDER-READY", *(f"{name}={port}" for (name, _, _), port in zip(routes, ports)), flush=True)
    await stop.wait()
    for server in servers:
        server.close()


def main(argv: list[str]) -> int:
    netns, specs = argv[0], argv[1:]
    routes = []
    for spec in specs:
        name, target = spec.split("=", 1)
        ip, dport = target.rsplit(":", 1)
        routes.append((name, ip, int(dport)))
    asyncio.run(serve(netns, routes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
