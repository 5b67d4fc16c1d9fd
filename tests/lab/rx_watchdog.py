"""A lab guest's link watchdog (runs inside the guest, as root, on its own python3, stdlib only).

UML's vector driver learns of received frames from an edge-triggered epoll on the tap's
descriptor: if an edge is missed while the host's tap queue is full, no new frame can be
queued, so no new edge comes, and the guest never receives again (vector_net_open's own
comment names the case). The soak's second wedge looks like it: SSH silent, every NFS
read waiting, memory plentiful. Reopening the interface drains the queue
(vector_net_open reads it at once) and the guest's TCP connections carry on.

So: an echo request to the lab's bridge every second; when none is answered for STALL_S,
in either direction the link is dead, vec0 is reopened and a ``LAB-KICK`` line goes to
the console (the lab counts them: Lab.kicks). Kicks back off, so a cable pulled on
purpose is not hammered.

Usage: rx_watchdog.py IFACE BRIDGE_ADDRESS
"""

import os
import select
import socket
import struct
import subprocess
import sys
import time

INTERVAL_S = 1.0
STALL_S = 5.0  # a saturated single-CPU guest still answers within this
BACKOFF_MAX_S = 60.0


def _checksum(data):
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    total = (total >> 16) + (total & 0xFFFF)
    return ~(total + (total >> 16)) & 0xFFFF


def echo_request(ident, seq):
    header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    return struct.pack("!BBHHH", 8, 0, _checksum(header), ident, seq)


def is_reply(packet, ident):
    ihl = (packet[0] & 0x0F) * 4  # raw ICMP sockets hand over the IP header too
    if len(packet) < ihl + 8:
        return False
    kind, _code, _sum, got_ident, _seq = struct.unpack("!BBHHH", packet[ihl:ihl + 8])
    return kind == 0 and got_ident == ident


def say(line):
    with open("/dev/console", "w") as console:
        console.write(line + "\n")


def kick(iface):
    for state in ("down", "up"):
        subprocess.call(["ip", "link", "set", iface, state])


def main(iface, bridge):
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ident, seq = os.getpid() & 0xFFFF, 0
    answered, wait_s, kicks = time.monotonic(), STALL_S, 0
    while True:
        seq = (seq + 1) & 0xFFFF
        try:
            sock.sendto(echo_request(ident, seq), (bridge, 0))
        except OSError:
            pass  # no route while vec0 is down: counts as unanswered
        deadline = time.monotonic() + INTERVAL_S
        while time.monotonic() < deadline:
            ready, _, _ = select.select([sock], [], [], max(deadline - time.monotonic(), 0))
            if ready and is_reply(sock.recv(2048), ident):
                answered, wait_s = time.monotonic(), STALL_S
        silent = time.monotonic() - answered
        if silent >= wait_s:
            kicks += 1
            say("LAB-KICK %s: no answer from the switch for %.0f s: reopening it (kick %d)" % (iface, silent, kicks))
            kick(iface)
            answered, wait_s = time.monotonic(), min(wait_s * 2, BACKOFF_MAX_S)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
