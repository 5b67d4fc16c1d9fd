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

What the 6.1 driver does on a transmit error (read, not yet seen happen): a tap write that
fails with anything but EAGAIN/ENOBUFS sets vp->in_error, after which every transmit
returns NETDEV_TX_BUSY and the receive descriptor is switched off, until the interface
is closed. The qdisc then requeues the same frame over and over, so the kick line carries
the qdisc's backlog and requeues (climbing requeues with a standing backlog is that latch)
and whether the reopen itself worked (a failed open leaves the 6.1 driver refusing every
later one).

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


def qdisc(iface):
    """'qdisc backlog 0b 0p requeues 0' from tc's statistics (several qdiscs: each), or what stood in the way."""
    try:
        out = subprocess.run(["tc", "-s", "qdisc", "show", "dev", iface], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, universal_newlines=True, timeout=5).stdout  # noqa: UP021 (3.6)
    except (OSError, subprocess.SubprocessError) as exc:
        return "qdisc unread (%s)" % exc.__class__.__name__
    found = [line.strip() for line in out.splitlines() if line.strip().startswith("backlog")]
    return "qdisc " + ("; ".join(found) if found else "unread")


def link_state(iface):
    """'link up (operstate unknown)': whether the interface is up (IFF_UP), and what the driver reports
    (vec0 reports no carrier, so its operstate reads unknown while it works)."""
    try:
        with open("/sys/class/net/%s/flags" % iface) as f:
            up = int(f.read().strip(), 16) & 1
        with open("/sys/class/net/%s/operstate" % iface) as f:
            oper = f.read().strip()
    except (OSError, ValueError):
        return "link unread"
    return "link %s (operstate %s)" % ("up" if up else "down", oper)


def kick(iface):
    """Close and reopen the interface; the exit status of each step."""
    return [subprocess.call(["ip", "link", "set", iface, state]) for state in ("down", "up")]


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
            before = "kick %d; sends refused %d; %s; %s" % (kicks, refused, counters(iface), qdisc(iface))
            refused = 0
            down, up = kick(iface)
            time.sleep(0.5)  # one line, after: the state it was in, and whether the reopen took
            say("LAB-KICK %s: no answer from the switch for %.0f s: reopened it (%s) -> down rc %d, up rc %d, "
                "%s; %s" % (iface, silent, before, down, up, link_state(iface), qdisc(iface)))
            answered, wait_s = time.monotonic(), min(wait_s * 2, BACKOFF_MAX_S)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
