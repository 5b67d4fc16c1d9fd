"""Parsers never raise: fuzzed garbage and mangled real outputs become problem notes."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from app.facts import build_host_facts
from app.facts import parse_nfs, parse_nfsdctl, parse_storage, parse_system
from app.facts.model import Parsed
from app.facts.script import MARKER

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "facts"
REAL = [(FIXTURES / n).read_text() for n in ("synth_server.txt", "synth_client.txt", "devbox_no_nfs.txt")]

# Text biased toward the characters these formats are made of.
junk = st.text(
    alphabet=st.sampled_from(list("0123456789abcdefABCDEF:[]()|,=+-#/ \t\n\"'\\@{}.xyzmdnfs_") + ["\x00", "é", "\u2028"]),
    max_size=400,
)
any_text = st.one_of(junk, st.text(max_size=200))

SINGLE = [
    parse_system.parse_os_release,
    parse_system.parse_uname,
    parse_system.parse_meminfo,
    parse_system.parse_python3,
    parse_system.parse_nfs_utils,
    parse_system.parse_tools,
    parse_storage.parse_mdstat,
    parse_storage.parse_md_sysfs,
    parse_storage.parse_block,
    parse_storage.parse_mountinfo,
    parse_storage.parse_bdi,
    parse_nfs.parse_exportfs,
    parse_nfs.parse_etc_exports,
    parse_nfs.parse_versions,
    parse_nfsdctl.parse_threads,
    parse_nfsdctl.parse_pool_mode,
    parse_nfsdctl.parse_listeners,
    parse_nfs.parse_pool_stats,
    parse_nfs.parse_nfsd_clients,
    parse_nfs.parse_tcp,
    parse_nfs.parse_mountstats,
]


@settings(max_examples=60, deadline=None)
@given(text=any_text)
def test_single_parsers_never_raise(text: str) -> None:
    for parser in SINGLE:
        result = parser(text)  # type: ignore[operator]
        assert isinstance(result, Parsed)
        assert all(isinstance(p, str) for p in result.problems)


@settings(max_examples=60, deadline=None)
@given(ip=any_text, sysfs=any_text, a=any_text, b=any_text, c=any_text)
def test_multi_input_parsers_never_raise(ip: str, sysfs: str, a: str, b: str, c: str) -> None:
    assert isinstance(parse_system.parse_nics(ip, sysfs), Parsed)
    for netlink in (a, "pool-threads: 8\nmin-threads: " + b):
        sections = {"nfsd_present": "yes", "nfsd_threads": a, "nfsd_versions": b, "nfsd_pool_stats": c,
                    "nfsd_max_block_size": ip, "nfsd_pool_threads": sysfs, "sunrpc_pool_mode": b, "nfsd_portlist": c,
                    "nfsdctl_threads": netlink, "nfsdctl_pool_mode": c, "nfsdctl_version": b, "nfsdctl_listener": a}
        assert isinstance(parse_nfs.parse_nfsd(sections), Parsed)
    mounts = parse_storage.parse_mountinfo(a).value
    stats = parse_nfs.parse_mountstats(b).value
    bdi = parse_storage.parse_bdi(c).value
    assert isinstance(parse_nfs.nfs_mounts(mounts, stats, bdi), Parsed)
    parse_storage.merge_md(parse_storage.parse_mdstat(a).value, parse_storage.parse_md_sysfs(b).value)


@settings(max_examples=40, deadline=None)
@given(
    sections=st.dictionaries(
        st.sampled_from(["os_release", "uname", "ip_addr", "net_sys", "block", "mdstat", "md_sysfs",
                         "mountinfo", "mountstats", "bdi", "exportfs", "nfsd_present",
                         "nfsd_threads", "nfsd_versions", "nfsd_pool_stats", "nfsd_clients",
                         "tcp", "python3", "tools", "nfs_utils", "cpu", "meminfo", "end"]),
        any_text,
    )
)
def test_whole_output_of_garbage_sections(sections: dict[str, str]) -> None:
    text = "".join(f"\n{MARKER}{k}@@\n{v}" for k, v in sections.items())
    facts = build_host_facts("h", text)
    json.dumps(facts.to_dict())  # always serialisable


@settings(max_examples=60, deadline=None)
@given(
    which=st.integers(0, len(REAL) - 1),
    cuts=st.lists(st.tuples(st.integers(0, 20000), st.integers(0, 200), any_text), max_size=6),
)
def test_mangled_real_outputs(which: int, cuts: list[tuple[int, int, str]]) -> None:
    text = REAL[which]
    for pos, length, insert in cuts:
        pos %= len(text) + 1
        text = text[:pos] + insert + text[pos + length :]
    facts = build_host_facts("h", text)
    json.dumps(facts.to_dict())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["ifname", "mtu", "operstate", "address", "addr_info", "local", "prefixlen", "x"]),
        inner, max_size=6),
    max_leaves=30,
)


@settings(max_examples=80, deadline=None)
@given(data=json_values)
def test_ip_json_of_any_shape(data: object) -> None:
    result = parse_system.parse_nics(json.dumps(data), "")
    assert isinstance(result.value, tuple)


def test_md_sysfs_with_a_members_key_line() -> None:
    got = parse_storage.parse_md_sysfs("md0 members junk\nmd0 member sda\nmd0 member sdb\n").value
    assert got["md0"]["members"] == ["sda", "sdb"]
