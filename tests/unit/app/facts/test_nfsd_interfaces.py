"""nfsd's state read through nfsdctl (netlink) where the host answers, through /proc and /sys otherwise."""

from __future__ import annotations

from pathlib import Path

from app.facts import build_host_facts
from app.facts.model import NETLINK, PROCFS
from app.facts.parse_nfs import parse_nfsd, parse_versions
from app.facts.parse_nfsdctl import parse_listeners, parse_pool_mode, parse_threads

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "facts"


def test_a_uml_72_server_is_read_through_netlink() -> None:
    """A real capture of the lab's server on UML 7.2 with nfsdctl 3.1.1, its floor set (`nfsdctl threads -m 2 8`)."""
    f = build_host_facts("lab", (FIXTURES / "lab_server_uml72.txt").read_text())
    assert f.problems == () and f.kernel == "7.2.7"
    n = f.nfsd
    assert (n.interface, n.threads, n.pool_threads, n.min_threads, n.self_scaling) == (NETLINK, 8, (8,), 2, True)
    assert (n.pool_mode, n.npools, n.max_block_size) == ("global", 1, 1048576)
    assert n.listeners == ("tcp:[::]:2049", "tcp:0.0.0.0:2049")
    assert n.versions == {"3": True, "4.0": False, "4.1": True, "4.2": True}
    assert f.tools["nfsdctl"] == "/usr/sbin/nfsdctl"


def test_a_uml_61_server_falls_back_to_proc() -> None:
    n = build_host_facts("lab", (FIXTURES / "lab_server.txt").read_text()).nfsd
    assert (n.interface, n.threads, n.min_threads, n.self_scaling) == (PROCFS, 8, None, False)


def test_nfsdctl_that_did_not_answer_leaves_proc_in_charge() -> None:
    sections = {"nfsd_present": "yes", "nfsd_threads": "16", "nfsd_pool_threads": "8 8", "sunrpc_pool_mode": "percpu",
                "nfsd_portlist": "tcp 2049\nudp 2049\n", "nfsd_versions": "+3 +4 +4.1 +4.2",
                "nfsdctl_threads": "", "nfsdctl_pool_mode": "nfsdctl: failed to resolve nfsd generic netlink family"}
    n = parse_nfsd(sections).value
    assert (n.interface, n.threads, n.pool_threads, n.pool_mode, n.npools) == (PROCFS, 16, (8, 8), "percpu", 2)
    assert n.listeners == ("tcp 2049", "udp 2049") and n.min_threads is None


def test_several_pools_and_a_kernel_without_a_floor() -> None:
    parsed = parse_threads("gracetime: 90\nleasetime: 90\nscope: nfs1\npool-threads: 8 8 8 8\n")
    assert (parsed.value, parsed.problems) == (((8, 8, 8, 8), None), ())
    n = parse_nfsd({"nfsd_present": "yes", "nfsdctl_threads": "pool-threads: 4 4\nmin-threads: 0",
                    "nfsdctl_pool_mode": "pool-mode: percpu\nnpools: 2"}).value
    assert (n.threads, n.min_threads, n.self_scaling, n.pool_mode, n.npools) == (8, 0, False, "percpu", 2)


def test_odd_text_is_a_problem_never_a_value() -> None:
    assert parse_threads("pool-threads: 8 x\nmin-threads: -1").problems == (
        "odd nfsdctl pool-threads: '8 x'", "odd nfsdctl min-threads: '-1'")
    assert parse_pool_mode("pool-mode: everywhere").value == (None, None)
    assert parse_listeners("tcp:0.0.0.0:2049\n; rm -rf /").value == ("tcp:0.0.0.0:2049",)
    assert parse_versions("+3.0 +4.٣").value == {"3": True}
