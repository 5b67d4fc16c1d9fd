"""The command line, tried as an attacker or a careless admin: refused before any host or file is touched.

Every hostile value must end in argparse's one-line usage error (exit 2, naming the
option) — never a traceback, never an SSH connection, never a database opened. Values
that reach remote commands from the hosts themselves pass the core's own checks.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import sqlite3
import string
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app import cli
from app.commands import arguments
from app.commands.sweep import check_choices, choices_from_args
from app.hosts import remote_args
from app.hosts.connection import HostConnection
from app.hosts.pool import HostPool
from app.hosts.process import CommandResult
from app.hosts.remote_args import UnsafeValue
from app.knobs.catalog import SPECS
from app.knobs.model import KnobError, write_file
from app.knobs.network import MtuTarget, resolve_address, route_to
from app.knobs.targets import ExportSyncTarget, KernelFileTarget, ScratchMount, export_wdelay
from app.session.plan import PlanChoices, PlanError, Where, build_spec, plan_problems
from app.store.errors import StoreError

SWEEP = ["sweep", "--server", "srv", "--client", "c1", "--knob", "rsize=32K,1M"]


@pytest.fixture(autouse=True)
def no_hosts_no_db(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Any SSH connection fails the test; the default database must stay unmade; logs stay in tmp."""

    def contacted(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("a host was contacted")

    monkeypatch.setattr(HostConnection, "__init__", contacted)
    monkeypatch.setattr(HostPool, "__init__", contacted)
    monkeypatch.setattr(cli, "log_dir", lambda: tmp_path / "logs")
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    db = tmp_path / "default.db"
    monkeypatch.setenv("NFS_TUNER_DB", str(db))
    yield db
    assert not db.exists(), "the session database was created"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def refused(capsys: pytest.CaptureFixture[str], argv: list[str], option: str, *words: str) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2, (code, out, err)
    assert f"argument {option}: " in err, err
    assert "Traceback" not in out + err
    assert "\x1b" not in out + err  # shown escaped, never sent to the terminal
    for w in words:
        assert w in err, err
    return err


# --- numbers: nan, inf, negative, zero, overflow, empty -----------------------------------------
NUMERIC = ["--duration", "--link-mbps", "--repetitions", "--max-repetitions", "--file-size", "--seed", "--resume",
           "--deadman-timeout"]
BAD_NUMBERS = ["nan", "inf", "-inf", "-1", "0", "1e400", ""]


@pytest.mark.parametrize(("option", "value"), [(o, v) for o in NUMERIC for v in BAD_NUMBERS
                                                if (o, v) != ("--seed", "0")])  # seed 0 is the default seed
def test_every_numeric_option_of_sweep_refuses_non_finite_negative_zero_and_empty(
    capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    refused(capsys, [*SWEEP, f"{option}={value}"], option, repr(value))


@pytest.mark.parametrize(("option", "value"), [
    ("--repetitions", "1.5"), ("--file-size", "0x10"), ("--file-size", "99999999999"), ("--seed", "1e3"),
    ("--duration", "86401"), ("--link-mbps", "1e12"), ("--max-repetitions", "1001"), ("--resume", "9" * 30),
    ("--deadman-timeout", "9"), ("--deadman-timeout", "601"), ("--deadman-timeout", "30.5"),
    ("--duration", "five"), ("--repetitions", "٣"),  # an Arabic-Indic digit is a digit to int(), not to us
])  # fmt: skip
def test_numbers_out_of_range_or_not_plain_decimal_are_refused(
    capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    refused(capsys, [*SWEEP, f"{option}={value}"], option)


def test_the_duration_message_says_what_to_give(capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(capsys, [*SWEEP, "--duration", "nan"], "--duration")
    assert "nfs-tuner sweep: error: argument --duration: must be a finite number of seconds above 0, got 'nan'" in err


# --- knobs --------------------------------------------------------------------------------------
def test_an_unknown_knob_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(capsys, ["sweep", "--server", "s", "--client", "c", "--knob", "bogus=1,2"], "--knob")
    assert "unknown knob 'bogus'; known knobs: " + ", ".join(SPECS) in err


@pytest.mark.parametrize(("knob", "words"), [
    ("nfsd_threads=8,x", "nfsd_threads: 'x' is not a whole number"), ("nconnect=nan", "nconnect"),
    ("mtu=1e400", "mtu"), ("rsize=32K,-1", "rsize"), ("read_ahead_kb=inf", "read_ahead_kb"),
    ("rsize", "write NAME=V1,V2"), ("=8", "write NAME=V1,V2"), ("rsize=", "rsize"),
    ("nfsvers=4.0", "nfsvers"), ("export_sync=maybe", "export_sync"), ("nfsd_threads=0", "nfsd_threads"),
    ("-oremount=1", "unknown knob"), ("rsize=32K;reboot", "rsize"), ("nocto=on", "nocto"), ("nocto=nocto,1", "nocto"),
    ("actimeo=601", "actimeo"), ("actimeo=30s", "actimeo"), ("actimeo=-1", "actimeo"), ("export_wdelay=yes", "export_wdelay"),
])  # fmt: skip
def test_a_knob_value_that_is_not_one_the_knob_takes_is_refused(
    capsys: pytest.CaptureFixture[str], knob: str, words: str
) -> None:
    refused(capsys, ["sweep", "--server", "s", "--client", "c", f"--knob={knob}"], "--knob", words)


@pytest.mark.parametrize("knob", sorted(SPECS))
@pytest.mark.parametrize("text", ["128, 4K", "1M", "0x1000", "-1", "", "nan, 8", "1e400", "9" * 23])
def test_the_cli_and_the_plan_page_agree_on_knob_values(capsys: pytest.CaptureFixture[str], knob: str, text: str) -> None:
    """The --knob parser refuses exactly what the Plan page refuses, in the same words."""
    page = plan_problems(PlanChoices(knobs={knob: text}, allow_async=True, allow_restart=True))
    try:
        args = cli.parse(["sweep", "--server", "s", "--client", "c", "--knob", f"{knob}={text}", "--async-opt-in",
                     "--restart-opt-in"])
    except SystemExit as exc:
        assert exc.code == 2 and page.get(knob)
        assert f"argument --knob: {page[knob]}" in capsys.readouterr().err
    else:
        check_choices(choices_from_args(args))
        assert page == {}


@pytest.mark.parametrize("workload", ["bogus", "", "-x", "seq_read;rm"])
def test_an_unknown_workload_is_refused(capsys: pytest.CaptureFixture[str], workload: str) -> None:
    refused(capsys, [*SWEEP, f"--workload={workload}"], "--workload", "unknown workload")


# --- the session database and other files ---------------------------------------------------------
def _db_cases(tmp: Path) -> list[tuple[str, str]]:
    tmp.mkdir()
    a_file = tmp / "file"
    a_file.write_text("x")
    link = tmp / "link.db"
    link.symlink_to("/proc/version")
    return [("/proc/version", "/proc"), ("/proc/x/y.db", "/proc"), ("/sys", "/sys"), ("/sys/kernel/x.db", "/sys"),
            ("/dev/null", "/dev"), (str(tmp), "is a directory"), ("", "empty"), (str(a_file / "x.db"), "not a directory"),
            (str(link), "/proc"), ("/dev/shm/../null", "/dev")]  # fmt: skip


@pytest.mark.parametrize("command", [["sessions", "list"], ["journal"], ["report", "1", "--to", "r.html"], SWEEP,
                                     ["sessions", "show", "1"]])  # fmt: skip
def test_a_db_that_is_no_regular_file_on_disk_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    for db, words in _db_cases(tmp_path / "cases"):
        refused(capsys, [f"--db={db}", *command], "--db", words)


@pytest.mark.parametrize(("argv", "option"), [
    (["report", "1", "--to", "/proc/r.html"], "--to"), (["report", "1", "--to", "/tmp"], "--to"),
    (["sessions", "export", "1", "--to", "/dev/null"], "--to"), (["sessions", "export", "1", "--to", ""], "--to"),
    (["sessions", "export", "1", "--to", "x.db", "--csv", "/sys/x"], "--csv"),
    (["report", "0", "--to", "r.html"], "ID"), (["sessions", "show", "nan"], "ID"), (["sessions", "show", "-1"], "ID"),
    (["journal", "revert", "0"], "ID"), (["journal", "dismiss", "x"], "ID"),
    (["discover", "--ssh-config", "/nonexistent/config", "h"], "--ssh-config"),
    (["discover", "--ssh-config", "/tmp", "h"], "--ssh-config"), (["journal", "check", "--ssh-config", ""], "--ssh-config"),
    ([*SWEEP, "--ssh-config", "/nonexistent"], "--ssh-config"), (["knobs", "--server", "s", "--ssh-config", "/"], "--ssh-config"),
])  # fmt: skip
def test_files_and_ids_are_checked_by_the_parser(capsys: pytest.CaptureFixture[str], argv: list[str], option: str) -> None:
    refused(capsys, argv, option)


def test_a_csv_dir_that_is_a_file_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    refused(capsys, ["sessions", "export", "1", "--to", str(tmp_path / "s.db"), "--csv", str(tmp_path / "f")], "--csv")


# --- host names, addresses, export paths ------------------------------------------------------------
HOSTILE_NAMES = ["-oProxyCommand=touch /tmp/x", "a b", "x;rm", "", "\x1b[2J", "$(reboot)", "`id`", "a" * 300,
                 "héllo", "srv\n", "-", "a|b", "host:22", "../x", "user@host"]  # fmt: skip


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_host_names_are_refused_for_every_command(capsys: pytest.CaptureFixture[str], name: str) -> None:
    refused(capsys, ["sweep", f"--server={name}", "--client", "c", "--knob", "rsize=32K"], "--server", "host name")
    refused(capsys, ["sweep", "--server", "s", f"--client={name}", "--knob", "rsize=32K"], "--client")
    refused(capsys, ["knobs", f"--server={name}"], "--server")
    refused(capsys, ["knobs", "--server", "s", f"--client={name}"], "--client")
    refused(capsys, ["discover", "--", name], "HOST")


@pytest.mark.parametrize("value", ["-oremount,bind", "10.0.0.1;reboot", " 10.0.0.1", "10.0.0.1 ", "", "a b",
                                   "10.0.0.1\n-o", "[::1]"])  # fmt: skip
def test_hostile_server_addresses_are_refused(capsys: pytest.CaptureFixture[str], value: str) -> None:
    refused(capsys, [*SWEEP, f"--server-address={value}"], "--server-address", "address")


@pytest.mark.parametrize("value", ["-x", "-oremount,bind", "relative/path", "", "/srv/\x1b[2J", "/srv/a\x00b"])
def test_hostile_export_paths_are_refused(capsys: pytest.CaptureFixture[str], value: str) -> None:
    if "\x00" in value:
        # argv can never hold NUL; the parser still refuses it when called directly
        with pytest.raises(argparse.ArgumentTypeError):
            arguments.export_path(value)
        return
    refused(capsys, [*SWEEP, f"--export={value}"], "--export", "export path")
    refused(capsys, ["knobs", "--server", "s", f"--export={value}"], "--export")


def test_the_ordinary_values_still_parse() -> None:
    args = cli.parse([*SWEEP, "--server-address", "10.213.7.10", "--export", "/srv/nfs", "--duration", "2.5",
                      "--link-mbps", "117", "--repetitions", "2", "--file-size", "64", "--seed", "7",
                      "--client", "fe80::1", "--workload", "seq-write", "--deadman-timeout", "30"])  # fmt: skip
    assert args.deadman_timeout == 30 and cli.parse(SWEEP).deadman_timeout == 60
    assert args.duration == 2.5 and args.link_mbps == 117.0 and args.file_size == 64 and args.seed == 7
    assert args.client == ["c1", "fe80::1"] and args.knob == [arguments.KnobAssignment("rsize", "32K,1M")]
    assert cli.parse(["discover", "lab-server", "lab_client1", "10.0.0.1"]).hosts == ["lab-server", "lab_client1", "10.0.0.1"]


# --- what run() does with errors no parser can see -------------------------------------------------
def _failing(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    from app.commands import sessions

    def fail(*_args: Any, **_kwargs: Any) -> int:
        raise exc

    monkeypatch.setattr(sessions, "cmd_list", fail)


@pytest.mark.parametrize(("exc", "words"), [
    (PermissionError(13, "Permission denied", "/var/lib/x.db"), "Permission denied: /var/lib/x.db; check the path"),
    (StoreError("the session file is locked"), "nfs-tuner: the session file is locked"),
    (sqlite3.OperationalError("unable to open database file"), "unable to open database file; check that the session"),
])  # fmt: skip
def test_store_and_os_errors_are_one_line_with_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, exc: Exception, words: str
) -> None:
    _failing(monkeypatch, exc)
    code, out, err = run(capsys, "sessions", "list")
    assert code == 1 and words in err and "Traceback" not in out + err
    assert len(err.strip().splitlines()) == 1


def test_a_bug_says_internal_error_and_logs_the_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _failing(monkeypatch, ZeroDivisionError("boom"))
    code, out, err = run(capsys, "sessions", "list")
    assert code == 1 and "internal error (ZeroDivisionError: boom); please report it" in err
    assert "Traceback" not in out + err
    assert "ZeroDivisionError: boom" in (tmp_path / "logs" / cli.LOG_NAME).read_text()
    monkeypatch.setenv(cli.DEBUG_ENV, "1")  # developers and tests see it raised
    with pytest.raises(ZeroDivisionError):
        cli.main(["sessions", "list"])


# --- values hosts report, on their way into remote commands -------------------------------------------
class FakeConn:
    name = "client1"

    def __init__(self, stdout: str) -> None:
        self.stdout = stdout
        self.ran: list[list[str]] = []

    async def run(self, argv: list[str], **_kwargs: Any) -> CommandResult:
        self.ran.append(list(argv))
        return CommandResult(0, self.stdout, "", tuple(argv))


@pytest.mark.parametrize("reply", ['[{"dev": "-oX", "prefsrc": "10.0.0.2"}]', '[{"dev": "eth0", "prefsrc": "-x"}]',
                                   '[{"dev": "eth 0", "prefsrc": "10.0.0.2"}]', '[{"dev": "eth0", "prefsrc": "a;b"}]'])  # fmt: skip
def test_a_route_a_host_reports_with_an_option_like_word_is_refused(reply: str) -> None:
    conn = FakeConn(reply)
    with pytest.raises(KnobError, match="client1's route"):
        asyncio.run(route_to(conn, "10.0.0.1"))  # type: ignore[arg-type]


@pytest.mark.parametrize("reply", ["-oremount STREAM x\n", "x;y STREAM\n", "host.example STREAM\n"])
def test_a_getent_answer_that_is_no_address_is_refused(reply: str) -> None:
    with pytest.raises(KnobError, match="getent answer"):
        asyncio.run(resolve_address(FakeConn(reply), "srv"))  # type: ignore[arg-type]


def test_a_hostile_name_never_reaches_getent() -> None:
    conn = FakeConn("10.0.0.1 STREAM srv\n")
    with pytest.raises(KnobError, match="starts with '-'"):
        asyncio.run(resolve_address(conn, "-oremount,bind"))  # type: ignore[arg-type]
    assert conn.ran == []
    assert asyncio.run(resolve_address(conn, "srv")) == "10.0.0.1"  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [
    lambda: ScratchMount("-oremount,bind", "/srv/nfs", "/mnt/t"), lambda: ScratchMount("srv", "-x", "/mnt/t"),
    lambda: ScratchMount("srv", "/srv/nfs", "-t"), lambda: ScratchMount("", "", "relative"),
    lambda: ExportSyncTarget("/srv/nfs", "-oX"), lambda: ExportSyncTarget("-x", "*"),
    lambda: ExportSyncTarget("/srv/nfs", "a b"), lambda: export_wdelay("/srv/nfs", "-oX"), lambda: export_wdelay("-x", "*"),
    lambda: MtuTarget("-x"), lambda: MtuTarget("eth0; reboot"),
    lambda: KernelFileTarget(SPECS["nfsd_threads"], "-x"), lambda: write_file("--help", 1),
])  # fmt: skip
def test_targets_refuse_option_like_words_whoever_gave_them(make: Callable[[], object]) -> None:
    """Host reports and journal entries rebuild targets too: none of them is built from an option."""
    with pytest.raises(KnobError):
        make()


def test_good_targets_still_build_their_steps() -> None:
    mount = ScratchMount("10.0.0.1", "/srv/nfs", "/mnt/nfs-tuner-t")
    assert mount.set_steps("vers=4.2")[1].argv == ("mount", "-t", "nfs", "-o", "vers=4.2,nosuid,nodev",
                                                   "10.0.0.1:/srv/nfs", "/mnt/nfs-tuner-t")  # fmt: skip
    assert ScratchMount("", "", "/mnt/nfs-tuner-t").restore_steps("absent")[0].argv == ("umount", "/mnt/nfs-tuner-t")
    assert ExportSyncTarget("/srv/nfs", "10.213.7.0/24").target == "10.213.7.0/24:/srv/nfs"
    assert MtuTarget("lan0").set_steps(9000)[0].argv == ("ip", "link", "set", "dev", "lan0", "mtu", "9000")


@pytest.mark.parametrize(("where", "field"), [
    (Where("srv", ("c1",), "-oremount,bind"), "export"), (Where("srv", ("c1",), "/srv", "-oremount,bind"), "server_address"),
    (Where("-oProxyCommand=x", ("c1",), "/srv"), "server"), (Where("srv", ("c1", "a b"), "/srv"), "clients"),
    (Where("srv", ("c1",), "relative"), "export"),
])  # fmt: skip
def test_a_plan_on_hostile_hosts_values_is_refused_by_field(where: Where, field: str) -> None:
    """The export and the address may come from discovery (a client's mount): the plan refuses them too."""
    with pytest.raises(PlanError) as caught:
        build_spec(PlanChoices(knobs={"rsize": "32K"}), where)
    assert set(caught.value.problems) == {field}


# --- random strings through every parser: a safe value or ArgumentTypeError, nothing else --------------
ALPHABET = string.ascii_letters + string.digits + " -_.,;:/=~$`'\"\\|&*?[](){}<>!#%+@\t\n\r\x00\x1b\x7f\x9béß服\u202e"
SEEDS = ["", "-", "--", "nan", "inf", "-inf", "1e400", "0", "-0", "+1", "1_000", "0x10", "/proc/self", "~", "~nobody0/x",
         "/dev/null", "..", "/", "rsize=", "=", "rsize=32K", "mtu=9000", "seq_read", "srv", "10.0.0.1", "::1", "/srv/nfs"]


def _strings(n: int) -> list[str]:
    rng = random.Random(12)
    out = list(SEEDS)
    while len(out) < n:
        base = rng.choice(SEEDS) if rng.random() < 0.3 else ""
        out.append(base + "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 24))))
    return out


def _safe_word(value: str) -> bool:
    return bool(value) and not value.startswith("-") and not any(c.isspace() or not c.isprintable() for c in value)


def _local_path_ok(value: str) -> bool:
    real = Path(value).resolve()
    return not any(real == t or t in real.parents for t in arguments.SYSTEM_TREES) or value == os.devnull


PARSERS: dict[str, tuple[Callable[[str], Any], Callable[[Any], bool]]] = {
    "duration": (arguments.finite_positive_float("seconds", 86400), lambda v: math.isfinite(v) and 0 < v <= 86400),
    "runs": (arguments.whole_number("runs", 1, 1000), lambda v: 1 <= v <= 1000),
    "seed": (arguments.whole_number("a whole number", 0), lambda v: v >= 0),
    "session_id": (arguments.session_id, lambda v: 1 <= v <= arguments.SQLITE_MAX),
    "knob": (arguments.knob_assignment, lambda v: v.name in SPECS),
    "workload": (arguments.workload, lambda v: _safe_word(v)),
    "host_name": (arguments.host_name, _safe_word),
    "address": (arguments.address, _safe_word),
    "export_path": (arguments.export_path, lambda v: v.startswith("/") and v.isprintable()),
    "db_path": (arguments.db_path, _local_path_ok),
    "report_file": (arguments.report_file, _local_path_ok),
    "output_dir": (arguments.output_dir, _local_path_ok),
    "ssh_config": (arguments.ssh_config, lambda v: Path(v).is_file() or v == os.devnull),
}


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_random_strings_parse_to_a_safe_value_or_a_usage_error(name: str) -> None:
    parse, safe = PARSERS[name]
    accepted = 0
    for text in _strings(400):
        try:
            value = parse(text)
        except argparse.ArgumentTypeError as exc:
            assert str(exc), text
            continue
        assert safe(value), (text, value)
        accepted += 1
    assert accepted < 400


@pytest.mark.parametrize("check", [remote_args.host_name, remote_args.address, remote_args.ip_address,
                                   remote_args.interface, remote_args.absolute_path, remote_args.word])  # fmt: skip
def test_random_strings_through_the_core_checks_give_the_value_or_unsafe_value(check: Callable[[str, str], str]) -> None:
    for text in _strings(400):
        try:
            value = check(text, "value")
        except UnsafeValue as exc:
            assert str(exc).startswith("value"), exc
            continue
        assert value == text and not value.startswith("-") and value.isprintable()
