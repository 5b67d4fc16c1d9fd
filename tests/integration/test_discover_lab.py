"""Done-means of issue 3 against the real lab: real sshd, knfsd, md RAID-5, NFS clients."""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from app import cli
from app.discovery import discover_many, require_client, require_server
from app.facts.parse_system import SYSCTLS
from app.hosts import HostPool, NotAnNfsServer, SshSettings

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def discover(lab: Any, capsys: pytest.CaptureFixture[str], *hosts: str) -> dict[str, dict[str, Any]]:
    code = cli.main(
        ["discover", "--ssh-config", str(lab.ssh_config), *hosts, "--json", "--trust-new-keys"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    return {h["host"]: h["facts"] for h in data["hosts"]}


def read(lab: Any, host: str, path: str) -> str:
    return lab.run(host, f"cat {shlex.quote(path)}").stdout.strip()


def client_mount(facts: dict[str, Any]) -> dict[str, Any]:
    (mount,) = [m for m in facts["nfs_mounts"] if m["mount_point"] == "/mnt/lab"]
    return mount


@pytest.mark.every_kernel
def test_discover_server_and_client(lab: Any, capsys: pytest.CaptureFixture[str]) -> None:
    facts = discover(lab, capsys, "lab-server", "lab-client1")
    server, client = facts["lab-server"], facts["lab-client1"]

    assert "server" in server["roles"]
    md0 = next(a for a in server["md_arrays"] if a["name"] == "md0")
    assert md0["level"] == "raid5"
    # The lab's members are dm-delay devices (lab-md-a/b/c) over ubda/b/c: discovery names what md holds.
    assert sorted(md0["members"]) == sorted(lab.run("lab-server", "ls /sys/block/md0/slaves").stdout.split())
    assert len(md0["members"]) == 3
    assert md0["stripe_cache_size"] == int(read(lab, "lab-server", "/sys/block/md0/md/stripe_cache_size"))
    assert md0["chunk_kb"] and md0["chunk_kb"] > 0

    assert any(e["path"] == "/srv/nfs" for e in server["exports"])
    fs = next(e for e in server["export_filesystems"] if e["export_path"] == "/srv/nfs")
    assert fs["fstype"] == "ext4" and fs["md_array"] == "md0"

    nfsd = server["nfsd"]
    assert nfsd["threads"] == int(read(lab, "lab-server", "/proc/fs/nfsd/threads"))
    assert nfsd["versions"]["4.2"] and nfsd["pool_mode"] == read(lab, "lab-server", "/sys/module/sunrpc/parameters/pool_mode")
    # Through nfsd's netlink interface where the host's nfsdctl answers (the lab's UML 7.2), else /proc.
    netlink = lab.run("lab-server", "nfsdctl threads", check=False).stdout
    if "pool-threads:" in netlink:
        floor = next((int(ln.split()[1]) for ln in netlink.splitlines() if ln.startswith("min-threads:")), None)
        assert (nfsd["interface"], nfsd["min_threads"]) == ("netlink", floor)
        assert nfsd["listeners"] == lab.run("lab-server", "nfsdctl listener").stdout.split()
    else:
        assert (nfsd["interface"], nfsd["min_threads"]) == ("procfs", None)
        assert nfsd["listeners"] == list(dict.fromkeys(read(lab, "lab-server", "/proc/fs/nfsd/portlist").splitlines()))
    lan = [n for n in server["nics"] if n["name"] != "lo" and n["addresses"]]
    assert lan and all(n["mtu"] for n in lan)

    client_addrs = {a.split("/")[0] for n in client["nics"] for a in n["addresses"]}
    candidates = {c["address"] for c in server["client_candidates"]}
    assert client_addrs & candidates, (client_addrs, candidates)

    mount = client_mount(client)
    mounts_line = lab.run("lab-client1", "grep ' /mnt/lab ' /proc/mounts").stdout
    rsize = int(mounts_line.split("rsize=")[1].split(",")[0])
    assert mount["rsize"] == rsize
    assert mount["read_ahead_kb"] == int(
        read(lab, "lab-client1", f"/sys/class/bdi/{mount['dev']}/read_ahead_kb")
    )
    assert client["python3"]["present"] and client["privilege"] == "root"


def test_client_is_not_an_nfs_server(lab: Any) -> None:
    async def go() -> None:
        async with HostPool(SshSettings(config_file=lab.ssh_config)) as pool:
            (found,) = await discover_many(pool, ["lab-client1"])
        assert found.facts is not None, found.error
        require_client(found.facts)
        # the client's tunables, read by Debian's sh (dash): every one the knobs need, with its value
        assert set(found.facts.sysctls) == set(SYSCTLS) and found.facts.sysctls["vm.dirty_bytes"] > 0, found.facts.sysctls
        with pytest.raises(NotAnNfsServer, match="lab-client1"):
            require_server(found.facts)

    asyncio.run(go())


def test_facts_follow_hand_made_changes(lab: Any, capsys: pytest.CaptureFixture[str]) -> None:
    before = discover(lab, capsys, "lab-server", "lab-client1")
    threads = before["lab-server"]["nfsd"]["threads"]
    dev = client_mount(before["lab-client1"])["dev"]
    ra_path = f"/sys/class/bdi/{dev}/read_ahead_kb"
    readahead = client_mount(before["lab-client1"])["read_ahead_kb"]
    new_threads = threads + 3
    new_ra = 1024 if readahead != 1024 else 2048
    try:
        lab.run("lab-server", f"echo {new_threads} > /proc/fs/nfsd/threads")
        lab.run("lab-client1", f"echo {new_ra} > {shlex.quote(ra_path)}")
        after = discover(lab, capsys, "lab-server", "lab-client1")
        assert after["lab-server"]["nfsd"]["threads"] == new_threads
        assert client_mount(after["lab-client1"])["read_ahead_kb"] == new_ra
    finally:
        lab.run("lab-server", f"echo {threads} > /proc/fs/nfsd/threads")
        lab.run("lab-client1", f"echo {readahead} > {shlex.quote(ra_path)}")


def test_three_hosts_concurrently(lab: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        ["discover", "--ssh-config", str(lab.ssh_config), "lab-server", "lab-client1",
         "lab-client2", "--json", "--trust-new-keys"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    hosts = json.loads(out)["hosts"]
    assert [h["host"] for h in hosts] == ["lab-server", "lab-client1", "lab-client2"]
    assert all(h["ok"] for h in hosts)
    # Timings are printed, not asserted: benchmarks/discover_concurrency.py compares them.
    print({h["host"]: h["seconds"] for h in hosts})
