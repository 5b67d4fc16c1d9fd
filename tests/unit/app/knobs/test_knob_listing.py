from __future__ import annotations

import dataclasses
from pathlib import Path

from app.facts.build import build_host_facts
from app.knobs.catalog import SPECS
from app.knobs.listing import format_rows, knob_rows

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "facts"


def _facts(name: str, host: str):  # type: ignore[no-untyped-def]
    # Privilege comes from discovery's probe, not from the captured output.
    return dataclasses.replace(build_host_facts(host, (FIXTURES / name).read_text()), privilege="root")


def test_rows_cover_every_knob_with_real_lab_values() -> None:
    rows = knob_rows(_facts("lab_server.txt", "lab-server"), [_facts("lab_client1.txt", "lab-client1")], "/srv/nfs")
    by = {(r.host, r.knob, r.target): r for r in rows}
    assert by[("lab-server", "nfsd_threads", "/proc/fs/nfsd/threads")].current.isdigit()
    assert by[("lab-server", "export_sync", "10.213.7.0/24:/srv/nfs")].current == "sync"
    assert by[("lab-server", "stripe_cache_size", "/sys/block/md0/md/stripe_cache_size")].safety == "memory"
    # UML 6.1's threads do not scale themselves, and one CPU makes one pool whatever the pool mode
    assert {r.knob for r in rows} == set(SPECS) - {"nfsd_min_threads", "pool_mode"}
    mtu_targets = {r.target for r in rows if r.knob == "mtu"}
    assert mtu_targets == {"lan0"}, "only the NIC with a routable address faces the other hosts"
    assert all(r.can_change for r in rows)


def test_read_only_login_is_named_with_the_sudoers_line() -> None:
    server = dataclasses.replace(_facts("lab_server.txt", "lab-server"), privilege="read-only",
                                 sudoers_line="bob ALL=(root) NOPASSWD: /usr/sbin/rpc.nfsd")  # fmt: skip
    rows = knob_rows(server, [])
    assert rows and not any(r.can_change for r in rows)
    text = format_rows(rows)
    assert "no (read-only)" in text and "bob ALL=(root) NOPASSWD" in text
    assert "data-risk" in text and "may lose data" in text  # the async warning is shown


def test_each_row_says_where_its_knob_acts_and_host_wide_ones_say_why() -> None:
    rows = knob_rows(_facts("lab_server.txt", "lab-server"), [_facts("lab_client1.txt", "lab-client1")], "/srv/nfs")
    where = {r.knob: r.where for r in rows}
    assert where["nfsd_threads"] == "server" and where["rsize"] == where["read_ahead_kb"] == "test mount"
    assert where["rpc_slots"] == where["dirty_bytes"] == "whole client" and where["mtu"] == "link"
    text = format_rows(rows)
    assert "ACTS ON" in text.splitlines()[0]
    assert any(line.startswith("rpc_slots: Host-wide on each client") for line in text.splitlines())  # safe, yet said


def test_a_self_scaling_nfsd_lists_its_floor_and_its_ceiling_through_nfsdctl() -> None:
    rows = knob_rows(_facts("lab_server_uml72.txt", "lab-server"), [])
    by = {r.knob: r for r in rows}
    assert (by["nfsd_threads"].target, by["nfsd_threads"].current) == ("nfsdctl threads", "8")
    assert (by["nfsd_min_threads"].target, by["nfsd_min_threads"].current) == ("nfsdctl threads -m", "2")
    assert by["max_block_size"].valid.endswith("4194304")


def test_a_login_with_the_helper_may_change_what_a_root_login_may_and_a_read_only_one_nothing() -> None:
    """The narrow rule's login changes knobs through nfs-tuner-helper: never listed (or pre-flight checked) as read-only."""
    for privilege, can in (("sudo through nfs-tuner-helper", True), ("passwordless sudo", True), ("read-only", False)):
        server = dataclasses.replace(_facts("lab_server.txt", "lab-server"), privilege=privilege)
        client = dataclasses.replace(_facts("lab_client1.txt", "lab-client1"), privilege=privilege)
        rows = knob_rows(server, [client], "/srv/nfs")
        assert rows and all(r.can_change is can for r in rows), (privilege, [(r.knob, r.why_not) for r in rows])
        assert all(("read-only" in r.why_not) is not can for r in rows)
