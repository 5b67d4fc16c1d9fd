"""nfs-tuner-helper's contract, tested from its own table (issue 28).

CONTRACT (app/knobs/sudo_helper_host.py) is the helper's whole policy. From it:

- every row's example command is accepted on a made-up host, and becomes exactly the
  absolute argv the row allows;
- every argument of every row, replaced by each hostile value of the corpus below
  (absolute paths, ``..``, other runs' tokens, Unicode digits, nan and inf, shell
  characters, options, NUL, newlines …), is refused;
- random and mutated argument vectors (hypothesis) are either refused, or become a
  command an oracle written here, independently of the helper's code, allows;
- the helper as a program, with its subprocess module replaced by a recorder, runs
  nothing for a refused command and exactly the checked argv otherwise.

The made-up host: tools in /usr/bin, one export, one NFS mount of ``nfs1``, an
``eth0``, and nfs-tuner's mount point /mnt/nfs-tuner-7-ab12cd.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.knobs.deadman import MAX_TIMEOUT, MIN_TIMEOUT
from app.knobs.sudo_helper import contract_table, helper_namespace

MOUNT_POINT = "/mnt/nfs-tuner-7-ab12cd"
EXPORT = ("10.0.0.0/24", "/srv/nfs")
TOKEN_DIR = "/run/nfs-tuner/0123456789ab"

# One valid value per argument name of the table: a row whose argument has no example fails
# test_every_argument_has_an_example, so no new row escapes these tests.
EXAMPLES: dict[str, str] = {
    "TUNABLE": "/proc/fs/nfsd/threads", "KERNEL_FILE": "/proc/fs/nfsd/pool_stats", "THREADS": "16",
    "EXPORT_OPTIONS": "rw,async,no_subtree_check", "CLIENT:/PATH": f"{EXPORT[0]}:{EXPORT[1]}",
    "MOUNT_POINT": MOUNT_POINT, "TYPE": "nfs", "OPTIONS": "vers=4.2,rsize=1048576,nconnect=4",
    "SERVER:/PATH": "nfs1:/srv/nfs", "COUNT": "2", "WAIT": "2", "SIZE": "8972", "IP": "10.0.0.1",
    "IFACE": "eth0", "MTU": "9000", "SWITCH_DIR": TOKEN_DIR, "TIMEOUT": "60", "MIN_THREADS": "2", "POOL_MODE": "percpu\n",
    "NUMBER": "16\n", "1|2|3": "3\n", "RESTORE_JSON": '[{"id": 1, "steps": [{"argv": ["sync"]}]}]',
}  # fmt: skip

HOSTILE: list[str] = [
    "", " ", "-", "--", "-o", "--help", "-rf", "/", ".", "..", "../..", "/etc/shadow", "../../../etc/shadow",
    "/proc/fs/nfsd/../../../etc/shadow", "/proc/1/environ", "/etc/ssh/ssh_host_ed25519_key", "/root/.ssh/id_rsa",
    "/etc/sudoers", "/dev/sda", "/dev/mem", "/run/nfs-tuner/0123456789ab/../../../etc/shadow",
    "/run/nfs-tuner/0123456789ab/fired.json", "/run/nfs-tuner/ffffffffffff", "/run/nfs-tuner/abc", "/tmp/x",
    "/mnt/nfs-tuner-7-ab12cd/../../etc", "/mnt", "/mnt/nfs-tuner-x/../x", "fired.json/../../x", "restore.json\x00",
    "٣", "²", "１６", "1e3", "nan", "inf", "-inf", "NaN", "1.5e2", "0x10", "-1", "0", "99999999999999999999",
    "8;id", "8 && id", "$(id)", "`id`", "8\nid", "8\x00", "\x1b[2J", "a" * 5000, "rw,no_root_squash",
    "bind", "remount,rw", "rw,suid", "rw,dev,exec", "proto=rdma", "sec=krb5p", "bg,retry=10000", "vers=4.2,rsize=1;id",
    "evil.example:/srv/nfs", "nfs1:/srv/../etc", "nfs1:", "-oremount:/x", "[::1]:/x", "*:/", "lo", "nonexistent0",
    "10.0.0.1;id", "::ffff:10.0.0.1 ", "\u202e", "sync ", "restore.json", "fired.json",
]  # fmt: skip


class FakeOs:
    """The helper's ``os`` on a made-up host: its mount point and interfaces exist, it runs as root."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.path = SimpleNamespace(join=real.path.join, isdir=lambda p: p in ("/sys/class/net/eth0", "/sys/class/net/lo"))

    def geteuid(self) -> int:
        return 0

    def lstat(self, path: str) -> os.stat_result:
        if path in ("/mnt", MOUNT_POINT):
            return os.stat_result((0o040755, 0, 0, 2, 0, 0, 4096, 0, 0, 0))
        raise FileNotFoundError(path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.fixture(scope="module")
def helper() -> dict[str, Any]:
    ns = helper_namespace()
    ns["os"] = FakeOs(os)
    ns["_tool"] = lambda name: "/usr/bin/" + name
    ns["_exported"] = lambda: {EXPORT: {"rw", "sync", "no_subtree_check"}}
    ns["_mounts"] = lambda: [("/", "ext4", "/dev/vda"), ("/mnt/data", "nfs4", "nfs1:/srv/nfs")]
    ns["_fstab"] = lambda: [("nfs2.example:/home", "nfs"), ("/dev/vdb", "ext4")]
    return ns


def _rows(helper: dict[str, Any]) -> list[Any]:
    return list(helper["CONTRACT"])


def _example(helper: dict[str, Any], row: Any) -> tuple[list[str], str]:
    arg = helper["Arg"]
    argv = [row.program, *(EXAMPLES[a.name] if isinstance(a, arg) else a for a in row.args)]
    return argv, EXAMPLES[row.stdin.name] if row.stdin is not None else ""


NS = helper_namespace()  # for the parameters; each test runs on the fixture's own copy
ROWS = NS["CONTRACT"]
ROW_IDS = [NS["usage"](r) for r in ROWS]


def test_every_argument_has_an_example(helper: dict[str, Any]) -> None:
    arg = helper["Arg"]
    names = {a.name for r in _rows(helper) for a in (*r.args, r.stdin) if isinstance(a, arg)}
    assert names <= set(EXAMPLES), names - set(EXAMPLES)


def test_each_command_has_one_row(helper: dict[str, Any]) -> None:
    """No example fits the shape of an earlier row than its own: the first row that fits is the one that applies."""
    for row in _rows(helper):
        argv, _ = _example(helper, row)
        assert helper["row_of"](argv) is row, helper["usage"](row)


def test_the_switch_timeouts_are_the_controllers(helper: dict[str, Any]) -> None:
    assert helper["MIN_TIMEOUT"] == MIN_TIMEOUT
    switch: dict[str, Any] = {"__name__": "switch"}
    exec(compile(_switch_source(), "switch", "exec"), switch)
    assert switch["MAX_TIMEOUT"] == MAX_TIMEOUT and helper["MAX_RESTORE_INPUT"] == switch["MAX_FILE"]


def _switch_source() -> str:
    from importlib import resources

    return resources.files("app.knobs").joinpath("deadman_host.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("index", range(len(ROWS)), ids=ROW_IDS)
def test_each_rows_example_is_accepted_as_exactly_that_command(helper: dict[str, Any], index: int) -> None:
    row = _rows(helper)[index]
    argv, stdin = _example(helper, row)
    got, args, data = helper["checked"](argv, stdin)
    assert got is row and data == stdin
    if row.program in ("deadman", "version"):
        return
    out = helper["check"](argv, stdin)
    assert out[0] == "/usr/bin/" + row.program
    if row.program == "mount":  # the options gain nosuid,nodev; nothing else changes
        assert out[1:] == [*argv[1:4], argv[4] + ",nosuid,nodev", *argv[5:]]
    else:
        assert out[1:] == argv[1:]
    assert allowed(out, stdin)  # the oracle below agrees with the table on what it allows


# Values of the corpus that are valid for one argument on the made-up host (a ping of 0 bytes, no floor, the loopback);
# another run's switch has the grammar of one: the switch refuses it unless this login armed it (test_deadman_host).
VALID_HERE = {("SIZE", "0"), ("MIN_THREADS", "0"), ("IFACE", "lo"), ("SWITCH_DIR", "/run/nfs-tuner/ffffffffffff")}


def _argument_cases() -> Iterator[tuple[int, int, str]]:
    arg = NS["Arg"]
    for i, row in enumerate(ROWS):
        for j, a in enumerate(row.args):
            if isinstance(a, arg):
                for bad in HOSTILE:
                    if bad != EXAMPLES[a.name] and (a.name, bad) not in VALID_HERE:
                        yield i, j, bad


@pytest.mark.parametrize(("index", "position", "bad"), list(_argument_cases()),
                         ids=lambda v: repr(v)[:30] if isinstance(v, str) else str(v))  # fmt: skip
def test_every_argument_refuses_every_hostile_value(helper: dict[str, Any], index: int, position: int, bad: str) -> None:
    row = _rows(helper)[index]
    argv, stdin = _example(helper, row)
    argv[1 + position] = bad
    try:
        helper["checked"](argv, stdin)
        if row.program not in ("deadman", "version"):
            helper["check"](argv, stdin)
    except helper["Refused"]:
        return
    raise AssertionError(f"accepted: {argv!r}")


@pytest.mark.parametrize("bad", ["", "8;id", "٣", "²", "nan", "-1", "1\n2\n", "8" * 13, " 8", "0x10", "8\x00", "\n"])
def test_stdin_grammars_refuse_what_is_not_a_number(helper: dict[str, Any], bad: str) -> None:
    for row in _rows(helper):
        if row.program == "tee":
            argv, _ = _example(helper, row)
            with pytest.raises(helper["Refused"]):
                helper["check"](argv, bad)


def test_mount_options_are_only_nfs_tuners_and_each_once(helper: dict[str, Any]) -> None:
    check, refused = helper["_mount_options"], helper["Refused"]
    assert check("defaults") == "defaults,nosuid,nodev"
    assert check("vers=3,rsize=4194304,wsize=65536,nconnect=16,actimeo=600,nocto,nosuid,nodev") == \
        "vers=3,rsize=4194304,wsize=65536,nconnect=16,actimeo=600,nocto,nosuid,nodev"
    for bad in ("rsize=8388608", "nconnect=17", "actimeo=601", "vers=4.3", "rsize=1048576,rsize=4096", "soft",
                "hard", "timeo=1", "proto=rdma", "sec=krb5p", "bg", "retry=10000", "fsc", "port=2049", "clientaddr=1.2.3.4",
                "nconnect=٣", "rsize=１０２４", "nocto=1", "suid", "exec", "dev", "context=x", ""):  # fmt: skip
        with pytest.raises(refused):
            check(bad)


def test_a_test_mount_names_only_a_server_the_host_knows(helper: dict[str, Any]) -> None:
    argv = ["mount", "-t", "nfs", "-o", "vers=4.2", "", MOUNT_POINT]
    for ok in ("nfs1:/srv/nfs", "nfs2.example:/home", "nfs1:/"):
        assert helper["check"]([*argv[:5], ok, argv[6]])[5] == ok
    for foreign in ("evil.example:/srv/nfs", "10.0.0.99:/srv/nfs", "[fd00::99]:/srv", "nfs1.evil:/srv/nfs"):
        with pytest.raises(helper["Refused"], match="nfs-tuner helper --server"):
            helper["check"]([*argv[:5], foreign, argv[6]])


def test_servers_rendered_into_the_helper_are_accepted() -> None:
    from app.knobs.sudo_helper import render

    ns: dict[str, Any] = {"__name__": "rendered"}
    exec(compile(render(["filer.example", "fd00::10"]), "helper", "exec"), ns)
    assert ns["SERVERS"] == ("filer.example", "fd00::10")
    ns["_mounts"], ns["_fstab"] = (list), (list)
    assert ns["_known_servers"]() == {"filer.example", "fd00::10"}
    assert ns["HELPER_DIGEST"] == helper_namespace()["HELPER_DIGEST"] or len(ns["HELPER_DIGEST"]) == 16


def test_a_server_name_that_is_code_is_not_rendered() -> None:
    from app.hosts.remote_args import UnsafeValue
    from app.knobs.sudo_helper import render

    for bad in ('x"); import os; os.system("id"); ("', "-oProxyCommand=x", "a b", "évil"):
        with pytest.raises(UnsafeValue):
            render([bad])


# -- an oracle written here, not from the helper's code -------------------------------------------------------------
_TUNABLES = re.compile(r"/proc/fs/nfsd/(threads|max_block_size)|/sys/block/md\d{1,4}/md/stripe_cache_size|"
                       r"/sys/class/bdi/\d+:\d+/read_ahead_kb|/sys/block/[a-z][a-z0-9]*/queue/read_ahead_kb|"
                       r"/proc/sys/vm/(drop_caches|dirty_(background_)?(bytes|ratio))|"
                       r"/proc/sys/sunrpc/tcp_(max_)?slot_table_entries", re.ASCII)  # fmt: skip
_READ_ONLY = re.compile(r"/proc/fs/nfsd/[a-z][a-z0-9_]*|/proc/fs/nfsd/clients/\d+/(info|states)|/proc/net/rpc/nfsd|"
                        r"/var/lib/nfs/etab", re.ASCII)  # fmt: skip
_OPTION = re.compile(r"vers=(3|4|4\.[012])|[rw]size=\d+|nconnect=\d+|actimeo=\d+|nocto|defaults|nosuid|nodev", re.ASCII)


def allowed(out: list[str], stdin: str) -> bool:
    """Whether an absolute argv is one the contract, read as an admin reads docs/security.md, permits."""
    if not out or any(not a or "\x00" in a or "\n" in a for a in out):
        return False
    prog, a = out[0].rsplit("/", 1)[-1], out[1:]
    if out[0] != "/usr/bin/" + prog:
        return False
    digits = re.compile(r"[0-9]+", re.ASCII)
    if prog == "sync":
        return a == []
    if prog == "tee" and a == ["/sys/module/sunrpc/parameters/pool_mode"]:
        return stdin.rstrip("\n") in ("global", "percpu", "pernode", "auto") and stdin.count("\n") <= 1
    if prog == "tee":
        return len(a) == 1 and bool(_TUNABLES.fullmatch(a[0])) and bool(re.fullmatch(r"[0-9]{1,12}\n?", stdin, re.ASCII))
    if prog == "cat":
        return len(a) == 2 and a[0] == "--" and bool(_TUNABLES.fullmatch(a[1]) or _READ_ONLY.fullmatch(a[1]))
    if prog == "rpc.nfsd":
        return len(a) == 1 and bool(digits.fullmatch(a[0])) and 1 <= int(a[0]) <= 1024
    if prog == "nfsdctl":  # the thread count, and with it a self-scaling nfsd's floor; nothing else
        counts = a[-1:] if a[:1] == ["threads"] and len(a) == 2 else a[2:] if a[:2] == ["threads", "-m"] and len(a) == 4 else []
        return bool(counts) and all(digits.fullmatch(c) and int(c) <= 1024 for c in counts) and int(a[-1]) >= 1
    if prog == "exportfs":
        return a == ["-v"] or (len(a) == 3 and a[0] == "-o" and a[2] == f"{EXPORT[0]}:{EXPORT[1]}"
                               and set(a[1].split(",")) <= {"rw", "sync", "no_subtree_check", "async", "wdelay", "no_wdelay"})
    if prog in ("mkdir", "rmdir", "umount"):
        point = a[-1] if a else ""
        flags = {"mkdir": [["-p", "-m", "0755"]], "rmdir": [[]], "umount": [[], ["-l"]]}[prog]
        return a[:-1] in flags and point == MOUNT_POINT
    if prog == "mount":
        if len(a) != 6 or a[0] != "-t" or a[1] not in ("nfs", "nfs4") or a[2] != "-o" or a[5] != MOUNT_POINT:
            return False
        opts = a[3].split(",")
        return ({"nosuid", "nodev"} <= set(opts) and all(_OPTION.fullmatch(o) for o in opts)
                and a[4].split(":")[0] in ("nfs1", "nfs2.example") and ".." not in a[4])
    if prog == "ping":
        return (len(a) == 12 and a[0] == "-n" and a[1] == "-c" and a[3:6] == ["-i", "0.2", "-W"]
                and a[7:10] == ["-M", "do", "-s"] and all(digits.fullmatch(x) for x in (a[2], a[6], a[10]))
                and int(a[2]) <= 10 and int(a[6]) <= 10 and not a[11].startswith("-"))  # fmt: skip
    if prog == "ip":
        return (len(a) == 6 and a[:3] == ["link", "set", "dev"] and a[3] in ("eth0", "lo") and a[4] == "mtu"
                and bool(digits.fullmatch(a[5])) and 576 <= int(a[5]) <= 65535)  # fmt: skip
    return False


def _argv_strategy() -> st.SearchStrategy[tuple[list[str], str]]:
    examples = [_example(NS, r) for r in ROWS if r.program not in ("deadman", "version")]
    word = st.one_of(st.sampled_from(HOSTILE), st.sampled_from(sorted(set(EXAMPLES.values()))), st.text(max_size=40),
                     st.sampled_from(["-l", "-v", "-o", "--", "-p", "-m", "0755", "-t", "nfs", "do", "mtu", "link"]))

    @st.composite
    def mutated(draw: st.DrawFn) -> tuple[list[str], str]:
        argv, stdin = draw(st.sampled_from(examples))
        argv = list(argv)
        for _ in range(draw(st.integers(1, 3))):
            how = draw(st.sampled_from(["replace", "insert", "delete", "stdin"]))
            if how == "replace":
                argv[draw(st.integers(0, len(argv) - 1))] = draw(word)
            elif how == "insert":
                argv.insert(draw(st.integers(0, len(argv))), draw(word))
            elif how == "delete" and len(argv) > 1:
                del argv[draw(st.integers(0, len(argv) - 1))]
            else:
                stdin = draw(st.one_of(word, st.sampled_from(["1\n", "8\n", "65536\n"])))
        return argv, stdin

    return st.one_of(mutated(), st.tuples(st.lists(word, max_size=12), word))


@settings(max_examples=1200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_argv_strategy())
def test_random_and_mutated_commands_are_refused_or_allowed(helper: dict[str, Any], case: tuple[list[str], str]) -> None:
    argv, stdin = case
    try:
        out = helper["check"](argv, stdin)
    except helper["Refused"]:
        return
    assert allowed(out, stdin), (argv, stdin, out)


class Recorder:
    """Stands in for the subprocess module: records what the helper would run."""

    DEVNULL = -3

    def __init__(self) -> None:
        self.ran: list[tuple[list[str], dict[str, str] | None, bytes | None]] = []

    def run(self, argv: list[str], input: bytes | None = None, env: dict[str, str] | None = None, **_: Any) -> Any:
        self.ran.append((list(argv), env, input))
        return SimpleNamespace(returncode=0)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_argv_strategy())
def test_the_program_runs_nothing_it_refuses_and_only_what_is_allowed(
        helper: dict[str, Any], case: tuple[list[str], str], monkeypatch: pytest.MonkeyPatch) -> None:
    argv, stdin = case
    if argv[:1] == ["deadman"]:
        return  # the switch acts on real directories: test_deadman_host.py beside it and the lab test
    recorder = Recorder()
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "subprocess", recorder)
        m.setattr(sys, "stdin", io.StringIO(stdin))
        m.setattr(sys, "stdout", io.StringIO())
        m.setattr(sys, "stderr", err := io.StringIO())
        status = helper["main"](["nfs-tuner-helper", *argv])
    if status == 2:
        assert recorder.ran == [] and err.getvalue().startswith("refused: ")
        return
    if argv == ["version"]:
        assert recorder.ran == []
        return
    ((ran, env, given_input),) = recorder.ran
    assert env == {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C", "LC_ALL": "C"}
    assert allowed(ran, (given_input or b"").decode()), (argv, ran)


def test_the_contract_table_is_the_one_in_the_docs() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[4] / "docs" / "security.md").read_text(encoding="utf-8")
    assert contract_table() in doc, "docs/security.md's contract table differs from `nfs-tuner helper --contract`"
