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

The send never blocks: in a soak wedge the watchdog's first kick came 180 s late, its
blocking send stuck behind a transmit queue that no longer drained. A refused send is
counted instead, and each kick line carries vec0's own counters, so the console tells
a receive stall (tx moving, rx still) from a transmit stall (sends refused, tx still).

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


def counters(iface):
    """vec0's statistics and its transmit queue's timeouts, as the kick line shows them."""
    out = []
    for name in ("tx_packets", "tx_dropped", "tx_errors", "rx_packets", "rx_dropped"):
        try:
            with open("/sys/class/net/%s/statistics/%s" % (iface, name)) as f:
                out.append("%s %s" % (name, f.read().strip()))
        except OSError:
            pass
    try:
        with open("/sys/class/net/%s/queues/tx-0/tx_timeout" % iface) as f:
            out.append("tx_timeout %s" % f.read().strip())
    except OSError:
        pass
    return ", ".join(out)


def kick(iface):
    for state in ("down", "up"):
        subprocess.call(["ip", "link", "set", iface, state])


def main(iface, bridge):
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.setblocking(False)
    ident, seq = os.getpid() & 0xFFFF, 0
    answered, wait_s, kicks, refused = time.monotonic(), STALL_S, 0, 0
    while True:
        seq = (seq + 1) & 0xFFFF
        try:
            sock.sendto(echo_request(ident, seq), (bridge, 0))
        except (BlockingIOError, InterruptedError):
            refused += 1  # the send buffer is full: frames sent before are still queued
        except OSError:
            pass  # no route while vec0 is down: counts as unanswered
        deadline = time.monotonic() + INTERVAL_S
        while time.monotonic() < deadline:
            ready, _, _ = select.select([sock], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                continue
            try:
                packet = sock.recv(2048)
            except (BlockingIOError, InterruptedError):
                continue
            if is_reply(packet, ident):
                answered, wait_s = time.monotonic(), STALL_S
        silent = time.monotonic() - answered
        if silent >= wait_s:
            kicks += 1
            say("LAB-KICK %s: no answer from the switch for %.0f s: reopening it (kick %d; sends refused %d; %s)"
                % (iface, silent, kicks, refused, counters(iface)))
            refused = 0
            kick(iface)
            answered, wait_s = time.monotonic(), min(wait_s * 2, BACKOFF_MAX_S)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
