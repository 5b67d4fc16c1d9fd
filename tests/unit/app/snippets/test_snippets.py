"""Snippets: each rendered text fed to the real parser where this machine has one."""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app.snippets import Snippet, SnippetContext, context_from_facts, render_all
from app.snippets import quoting as q
from app.snippets.nfs_files import exports_line, fstab_line
from app.snippets.udev_rules import md_rule, readahead_rule

FULL = {"nfsd_threads": 32, "rsize": 1048576, "wsize": 1048576, "nfsvers": "4.2", "nconnect": 4,
        "read_ahead_kb": 16384, "stripe_cache_size": 4096, "export_sync": "sync", "mtu": 9000}


def ctx(**kw: object) -> SnippetContext:
    base = dict(server="10.213.7.10", export_path="/srv/nfs", export_clients="10.213.7.0/24",
                export_options=("rw", "no_subtree_check", "no_root_squash"), mount_point="/mnt/lab",
                md_device="md0", server_host="lab-server", client_hosts=("lab-client1", "lab-client2"),
                nics={"lab-server": "lan0", "lab-client1": "lan0", "lab-client2": "ens3"}, session_id=7)
    base.update(kw)
    return SnippetContext(**base)  # type: ignore[arg-type]


def by_key(snippets: list[Snippet]) -> dict[str, Snippet]:
    return {s.key: s for s in snippets}


def test_every_snippet_has_title_target_text_and_risky_ones_a_safety_note() -> None:
    snippets = render_all({**FULL, "export_sync": "async"}, ctx())
    keys = by_key(snippets)
    assert {"fstab", "exports", "nfs.conf", "readahead-udev", "readahead-nfsrahead", "md-udev", "tuned",
            "ansible", "fio", "mtu-networkd:lab-server", "mtu-nmcli:lab-client2", "mtu-nm-keyfile:lab-client1",
            "mtu-ifupdown:lab-client1"} <= set(keys)
    assert len(keys) == len(snippets)
    for s in snippets:
        assert s.title and s.target and s.text.endswith("\n"), s.key
        json.dumps(s.to_json())
    assert "data the clients were told was safe" in keys["exports"].safety
    assert "data the clients were told was safe" in keys["ansible"].safety
    assert all("ping -M do -s 8972" in s.safety for k, s in keys.items() if k.startswith("mtu"))
    assert "ens3" in keys["mtu-ifupdown:lab-client2"].text


def test_fstab_line_escapes_spaces_and_carries_the_measured_options() -> None:
    line = fstab_line(FULL, ctx(export_path="/srv/my share", mount_point="/mnt/my share"))
    assert line == ("10.213.7.10:/srv/my\\040share /mnt/my\\040share nfs "
                    "vers=4.2,rsize=1048576,wsize=1048576,nconnect=4,hard,_netdev 0 0")
    assert len(line.split()) == 6
    assert fstab_line({}, ctx(server="fe80::1")).startswith("[fe80::1]:/srv/nfs ")
    assert q.fstab_field("a\\b\tc") == "a\\134b\\011c"


def test_exports_line_quotes_paths_with_spaces_and_places_sync_or_async() -> None:
    assert exports_line(FULL, ctx()) == "/srv/nfs 10.213.7.0/24(rw,sync,no_subtree_check,no_root_squash)"
    assert exports_line({"export_sync": "async"}, ctx(export_path="/srv/a b", export_options=("rw", "sync"))) \
        == '"/srv/a b" 10.213.7.0/24(rw,async)'
    with pytest.raises(ValueError, match="sync or async"):
        exports_line({"export_sync": "maybe"}, ctx())


@pytest.mark.parametrize(
    ("kw", "match"),
    [({"export_path": "relative"}, "absolute"), ({"export_path": '/srv/"x"'}, "double quote"),
     ({"mount_point": "/mnt/a\nb"}, "absolute"), ({"server": "bad host;rm"}, "host"),
     ({"export_clients": "10.0.0.0/8(rw)"}, "client"), ({"export_options": ("rw", "x y")}, "option")],
)
def test_values_that_cannot_be_written_safely_are_refused(kw: dict[str, object], match: str) -> None:
    snippets = render_all(FULL, ctx(**kw))
    refused = [s for s in snippets if s.key.startswith("refused:")]
    assert refused and all(re.search(match, s.safety) and s.text == "" for s in refused), refused
    assert any(not s.key.startswith("refused:") for s in snippets)  # the other formats are still there


def test_bad_names_are_refused_for_devices_and_nics() -> None:
    with pytest.raises(ValueError, match="md device"):
        md_rule("md0; rm -rf /", 4096)
    with pytest.raises(ValueError, match="17"):
        md_rule("md0", 99999)
    assert any(s.key == "refused:mtu" and "NIC" in s.safety for s in render_all({"mtu": 9000}, ctx(nics={"lab-server": "lan0 x"})))


_MOUNT_NFS = shutil.which("mount.nfs") or ("/sbin/mount.nfs" if Path("/sbin/mount.nfs").exists() else None)


@pytest.mark.skipif(os.geteuid() != 0 or _MOUNT_NFS is None, reason="mount -f with NFS needs root and mount.nfs")
def test_fstab_line_passes_mount_fake_verbose(tmp_path: Path) -> None:
    point = tmp_path / "mnt point"
    point.mkdir()
    fstab = tmp_path / "fstab"
    fstab.write_text(fstab_line(FULL, ctx(server="127.0.0.1", export_path="/srv/my nfs", mount_point=str(point))) + "\n")
    out = subprocess.run(["mount", "--fstab", str(fstab), "-fv", str(point)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "vers=4.2,rsize=1048576,wsize=1048576,nconnect=4,hard" in out.stdout + out.stderr
    verify = subprocess.run(["findmnt", "--verify", "--tab-file", str(fstab)], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout


# One udev rule assignment: KEY or KEY{attr}, an operator, a double-quoted value.
_UDEV_TOKEN = re.compile(r'^(?P<key>[A-Z_]+)(\{(?P<attr>[A-Za-z0-9_/.]+)\})?(?P<op>==|!=|\+=|-=|:=|=)"(?P<val>[^"]*)"$')
_UDEV_KEYS = {"SUBSYSTEM", "KERNEL", "ACTION", "TEST", "ATTR", "PROGRAM", "RUN", "ENV"}


def udev_tokens(rule: str) -> list[tuple[str, str | None, str, str]]:
    """A structural parse of a one-line rule (udevadm verify is systemd ≥ 254 only)."""
    lines = [ln for ln in rule.splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(lines) == 1
    # split on commas outside double quotes
    parts = [p.strip() for p in re.findall(r'(?:[^,"]|"[^"]*")+', lines[0])]
    out = []
    for p in parts:
        m = _UDEV_TOKEN.match(p)
        assert m is not None, f"not a udev token: {p!r}"
        assert m["key"] in _UDEV_KEYS
        out.append((m["key"], m["attr"], m["op"], m["val"]))
    return out


def _udevadm_verify() -> bool:
    r = subprocess.run(["udevadm", "verify", "--help"], capture_output=True, text=True) if shutil.which("udevadm") else None
    return r is not None and r.returncode == 0


@pytest.mark.parametrize("rule", [readahead_rule(16384), md_rule("md0", 4096)])
def test_udev_rules_are_well_formed(rule: str, tmp_path: Path) -> None:
    tokens = udev_tokens(rule)
    matches = [t for t in tokens if t[2] == "=="]
    assigns = [t for t in tokens if t[2] == "=" and t[0] == "ATTR"]  # PROGRAM= runs, it assigns nothing
    assert matches and len(assigns) == 1
    assert assigns[0][3] in ("16384", "4096")
    if _udevadm_verify():
        path = tmp_path / "99-test.rules"
        path.write_text(rule)
        out = subprocess.run(["udevadm", "verify", str(path)], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr


def test_nfs_conf_tuned_networkd_and_nm_keyfile_parse_as_ini() -> None:
    keys = by_key(render_all(FULL, ctx()))
    for key, section, option, value in [
        ("nfs.conf", "nfsd", "threads", "32"), ("nfs.conf", "nfsd", "vers4.2", "y"),
        ("readahead-nfsrahead", "nfsrahead", "nfs4", "16384"),
        ("tuned", "sysfs", "/sys/block/md0/md/stripe_cache_size", "4096"),
        ("tuned", "main", "include", "throughput-performance"),
        ("mtu-networkd:lab-server", "Link", "MTUBytes", "9000"),
        ("mtu-nm-keyfile:lab-client1", "ethernet", "mtu", "9000"),
    ]:
        parser = configparser.ConfigParser(delimiters=("=",))
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read_string(keys[key].text)
        assert parser[section][option] == value, key


def test_fio_job_reproduces_the_stored_workload() -> None:
    workload = {"kind": "seq_read", "block_size": 262144, "file_size": 268435456, "jobs": 2, "direct": False,
                "loop": False, "interval_s": 0.25, "duration_s": None}
    s = by_key(render_all(FULL, ctx(workload=workload)))["fio"]
    assert "directory=/mnt/lab" in s.text and "bs=262144" in s.text and "numjobs=2" in s.text
    assert "write_bw_log" not in s.text
    fallback = by_key(render_all(FULL, ctx(objective="seq_write", workload={"kind": "nonsense"})))["fio"]
    assert "rw=write" in fallback.text


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize("objective", ["seq_read", "seq_write", "small_files", "mixed"])
def test_fio_job_passes_fio_parse_only(objective: str, tmp_path: Path) -> None:
    s = by_key(render_all(FULL, ctx(objective=objective, mount_point=str(tmp_path))))["fio"]
    job = tmp_path / "job.fio"
    job.write_text(s.text)
    out = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr


_ANSIBLE = shutil.which("ansible-playbook")


@pytest.mark.skipif(_ANSIBLE is None, reason="ansible-playbook is not installed (tests/system-packages.txt)")
@pytest.mark.parametrize("config", [FULL, {"export_sync": "async"}, {"rsize": 65536}])
def test_ansible_playbook_passes_syntax_check(config: dict[str, object], tmp_path: Path) -> None:
    s = by_key(render_all(config, ctx(export_path="/srv/my nfs")))["ansible"]
    book = tmp_path / "nfs-tuner.yml"
    book.write_text(s.text)
    env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_HOME": str(tmp_path / "home")}
    out = subprocess.run([str(_ANSIBLE), "--syntax-check", "-i", "lab-server,lab-client1,lab-client2,", str(book)],
                         capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


_SYS_PY = shutil.which("python3", path="/usr/bin")


def _yaml_load(text: str) -> object:
    """PyYAML of the system Python (ansible's own), outside the venv which has none."""
    if _SYS_PY is None:
        pytest.skip("no system python3")
    # Ansible reads `!unsafe "x"` as the string x that it never templates.
    script = ("import json,sys,yaml\nL=yaml.SafeLoader\nL.add_constructor('!unsafe', lambda l, n: l.construct_scalar(n))\n"
              "print(json.dumps(yaml.load(sys.stdin, L)))")
    out = subprocess.run([_SYS_PY, "-c", script],
                         input=text, capture_output=True, text=True)
    if out.returncode != 0 and "No module named 'yaml'" in out.stderr:
        pytest.skip("system python3 has no PyYAML")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_ansible_playbook_structure_and_quoting_round_trip() -> None:
    config = FULL
    c = ctx(export_path="/srv/my nfs")
    plays = _yaml_load(by_key(render_all(config, c))["ansible"].text)
    assert isinstance(plays, list) and len(plays) == 2
    server, client = plays
    assert server["hosts"] == "lab-server" and client["hosts"] == "lab-client1:lab-client2"
    modules = {name for t in server["tasks"] for name in t if "." in name}
    assert modules == {"ansible.builtin.copy", "ansible.builtin.lineinfile", "ansible.builtin.shell"}
    exports = next(t["ansible.builtin.lineinfile"] for t in server["tasks"] if "ansible.builtin.lineinfile" in t)
    assert exports["line"] == exports_line(config, c)
    assert re.match(exports["regexp"], exports_line(config, c))
    assert not re.match(exports["regexp"], "/srv/my nfs2 *(rw)")
    udev = [t["ansible.builtin.copy"]["content"] for t in client["tasks"] if "ansible.builtin.copy" in t]
    assert udev == [readahead_rule(16384)]
    mount = next(t["ansible.posix.mount"] for t in client["tasks"] if "ansible.posix.mount" in t)
    assert mount["src"] == "10.213.7.10:/srv/my nfs" and mount["state"] == "mounted"
    assert {h["name"] for h in server["handlers"]} == {"apply nfsd threads", "re-export"}
    assert all("changed_when" in t for t in server["tasks"] + client["tasks"] if "ansible.builtin.shell" in t)


def test_context_from_stored_facts_finds_export_nics_md_and_mount_point() -> None:
    server = {"exports": [{"path": "/srv/nfs", "client": "10.213.7.0/24",
                           "options": ["rw", "sync", "no_subtree_check", "no_root_squash"]}],
              "nics": [{"name": "lo", "addresses": ["127.0.0.1/8"]}, {"name": "mgmt", "addresses": ["192.0.2.5/24"]},
                       {"name": "lan0", "addresses": ["10.213.7.10/24"]}],
              "export_filesystems": [{"export_path": "/srv/nfs", "md_array": "md0"}]}
    client = {"nics": [{"name": "lan0", "addresses": ["10.213.7.11/24"]}],
              "nfs_mounts": [{"export": "/srv/nfs", "mount_point": "/mnt/lab"}]}
    c = context_from_facts([("lab-server", "server", server), ("lab-client1", "client", client)], session_id=3)
    assert (c.server, c.export_path, c.export_clients) == ("10.213.7.10", "/srv/nfs", "10.213.7.0/24")
    assert c.export_options == ("rw", "no_subtree_check", "no_root_squash")
    assert c.md_device == "md0" and c.mount_point == "/mnt/lab" and c.client_hosts == ("lab-client1",)
    assert c.nics == {"lab-server": "lan0", "lab-client1": "lan0"}
    empty = context_from_facts([])
    assert empty == SnippetContext()


def test_the_fstab_line_names_the_server_as_the_clients_mount_it() -> None:
    """Seen before: `10.0.0.10:/srv/nfs` in the snippet where the clients mount `nfs-server:/srv/nfs`."""
    server = {"exports": [{"path": "/srv/nfs", "client": "10.0.0.0/24", "options": ["rw", "sync"]}],
              "nics": [{"name": "lan0", "addresses": ["10.0.0.10/24"]}]}

    def client(name: str) -> dict[str, object]:
        return {"nics": [{"name": "lan0", "addresses": ["10.0.0.11/24"]}],
                "nfs_mounts": [{"export": "/srv/nfs", "mount_point": "/mnt/nfs", "server": name}]}

    facts = [("srv", "server", server), ("c1", "client", client("nfs-server")), ("c2", "client", client("nfs-server")),
             ("c3", "client", client("10.0.0.10"))]
    ctx = context_from_facts(facts, mounted_as="other-name")
    assert ctx.server == "nfs-server"  # the clients' own word, the most of them, before anything else
    assert fstab_line({"rsize": 1048576}, ctx).startswith("nfs-server:/srv/nfs /mnt/nfs nfs rsize=1048576")
    # no client mounts it: as the sweep's test mounts named it, else the address in the export's network
    assert context_from_facts([("srv", "server", server)], mounted_as="nfs-server").server == "nfs-server"
    assert context_from_facts([("srv", "server", server)]).server == "10.0.0.10"
    # a host's report is untrusted: a name that is no name is passed over
    assert context_from_facts([("srv", "server", server), ("c1", "client", client("-oProxyCommand=x"))]).server \
        == "10.0.0.10"
