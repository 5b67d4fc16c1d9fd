"""The test mount's TCP connection: parsing `ss -tin`, new vs shared, and the MTU check."""

from __future__ import annotations

import pytest

from app.facts.model import MountEntry
from app.knobs.transport import (
    SharedConnection,
    check_mtu,
    mount_transport,
    other_mounts_of,
    parse_ss_tcp_info,
)

# Captured in the lab: client1's connection made at MTU 9000, then a v3 mount's new one.
SS_BEFORE = """State Recv-Q Send-Q Local Address:Port Peer Address:PortProcess
ESTAB 0      0        10.213.7.11:862   10.213.7.10:2049
\t cubic wscale:7,7 rto:210 rtt:1.16/1.25 ato:40 mss:8948 pmtu:9000 rcvmss:8948 advmss:8948 cwnd:10
"""
SS_AFTER = SS_BEFORE + """ESTAB 0      0        10.213.7.11:842   10.213.7.10:2049
\t cubic wscale:7,7 rto:210 rtt:0.424/0.205 ato:40 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 cwnd:10
"""


def test_parse_ss_reads_each_connection_and_its_frame_size() -> None:
    conns = parse_ss_tcp_info(SS_AFTER)
    assert [(c.local, c.peer, c.advmss, c.mtu) for c in conns] == [
        ("10.213.7.11:862", "10.213.7.10:2049", 8948, 9000),
        ("10.213.7.11:842", "10.213.7.10:2049", 1448, 1500),
    ]


def test_parse_ss_tolerates_no_connections_and_missing_info() -> None:
    assert parse_ss_tcp_info("State Recv-Q Send-Q Local Address:Port Peer Address:Port\n") == []
    bare = parse_ss_tcp_info("ESTAB 0 0 [fd00::11]:700 [fd00::10]:2049\n")
    assert [(c.local, c.peer, c.mtu) for c in bare] == [("[fd00::11]:700", "[fd00::10]:2049", None)]


def test_a_new_connection_is_the_test_mounts_own() -> None:
    t = mount_transport(parse_ss_tcp_info(SS_BEFORE), parse_ss_tcp_info(SS_AFTER))
    assert t.fresh and t.mtu == 1500
    assert t.to_negotiated() == {"transport": "new", "transport_mtu": "1500"}


def test_no_new_connection_means_the_mount_shares_an_old_one() -> None:
    old = parse_ss_tcp_info(SS_AFTER.replace("advmss:8948", "advmss:1448"))
    t = mount_transport(old, old)
    assert not t.fresh and t.mtu == 1500
    with pytest.raises(SharedConnection, match=r"carries 1500-byte frames, not MTU 9000.*Unmount lab-server's other"):
        check_mtu(t, 9000, "lab-client1", "lab-server")
    check_mtu(t, 1500, "lab-client1", "lab-server")  # the old connection carries 1500 well


def test_a_fresh_connection_at_the_mtu_passes_and_unknown_frames_are_not_refused() -> None:
    check_mtu(mount_transport([], parse_ss_tcp_info(SS_BEFORE)), 9000, "c", "s")
    check_mtu(mount_transport([], parse_ss_tcp_info("ESTAB 0 0 a:1 b:2049\n")), 9000, "c", "s")


def _mount(point: str, fstype: str, addr: str) -> MountEntry:
    opts = f"rw,vers=4.2,rsize=1048576,addr={addr},clientaddr=10.213.7.11"
    return MountEntry(1, "0:50", "/", point, fstype, "lab-server:/srv/nfs", "rw", opts)


def test_other_mounts_of_the_server_are_found_by_address() -> None:
    mounts = [
        _mount("/mnt/lab", "nfs4", "10.213.7.10"),
        _mount("/mnt/other", "nfs", "10.213.7.99"),
        _mount("/var/tmp/nfs-tuner-1-abc", "nfs4", "10.213.7.10"),
        MountEntry(2, "8:1", "/", "/srv", "ext4", "/dev/sda1", "rw", "addr=10.213.7.10"),
    ]
    assert other_mounts_of(mounts, "10.213.7.10", exclude="/var/tmp/nfs-tuner-1-abc") == ["/mnt/lab"]
