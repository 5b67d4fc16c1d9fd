"""Discovery end to end over real SSH (the in-process server runs the script on this machine)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import platform
import pwd
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import cli
from app.discovery import discover_host, discover_many, require_server
from app.hosts import HostPool, NotAnNfsServer
from tests.integration.test_ssh_support import FakeSshServer, run


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # the app's known_hosts


def test_discover_local_machine_in_one_round_trip(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            facts = await discover_host(conn)
        finally:
            await conn.close()
            await fake.stop()
        assert facts.host == "fake"
        assert facts.hostname == platform.node()
        assert facts.kernel == platform.release()
        assert facts.cpu_count == len(os.sched_getaffinity(0)) or facts.cpu_count == os.cpu_count()
        assert any(n.name == "lo" for n in facts.nics)
        assert "the discovery script's output was cut short" not in facts.problems
        # The script probes privilege itself: one command for the whole discovery.
        assert fake.commands == ["sh -s"]
        assert facts.user == pwd.getpwuid(os.geteuid()).pw_name
        if os.geteuid() == 0:
            assert facts.privilege == "root" and facts.sudoers_line == ""
        if not os.path.exists("/proc/fs/nfsd/threads"):
            with pytest.raises(NotAnNfsServer):
                require_server(facts)

    run(go())


def test_discover_read_only_login_gets_sudoers_line(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path, sudo="none").start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            await conn.privilege()  # the fake answers the probe as a plain user
            facts = await discover_host(conn)
        finally:
            await conn.close()
            await fake.stop()
        assert facts.user == "tuner" and facts.privilege == "read-only"
        assert facts.sudoers_line.startswith("tuner ALL=(root) NOPASSWD: ")
        assert fake.commands[1:] == ["sh -s"]  # no sudo attempted

    run(go())


def test_discover_sudo_login_reads_again_through_sudo(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path, sudo="nopasswd").start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            await conn.privilege()
            facts = await discover_host(conn)
        finally:
            await conn.close()
            await fake.stop()
        assert facts.privilege == "passwordless sudo" and facts.sudoers_line == ""
        assert fake.commands[1:] == ["sh -s", "sudo -n -- sh -s"]

    run(go())


def test_three_hosts_discovered_concurrently(tmp_path: Path) -> None:
    async def go() -> FakeSshServer:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        cfg = tmp_path / "three"
        cfg.write_text("".join(fake.config(a).read_text() for a in ("h1", "h2", "h3")))
        async with HostPool(fake.settings(cfg)) as pool:
            results = await discover_many(pool, ["h1", "h2", "h3"])
        await fake.stop()
        assert [r.host for r in results] == ["h1", "h2", "h3"]
        assert all(r.ok for r in results), [str(r.error) for r in results]
        return fake

    fake = run(go())
    assert fake.max_running >= 2  # the gather scripts overlapped


class ThreadedFake:
    """The fake server on its own loop, for code that calls asyncio.run itself (the CLI)."""

    def __init__(self, tmp: Path, **kw: object) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.fake = asyncio.run_coroutine_threadsafe(
            FakeSshServer(tmp, **kw).start(), self.loop  # type: ignore[arg-type]
        ).result(30)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.fake.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()


@pytest.fixture
def threaded(tmp_path: Path) -> Iterator[FakeSshServer]:
    server = ThreadedFake(tmp_path)
    try:
        yield server.fake
    finally:
        server.close()


def test_cli_trusts_new_key_for_scripts_and_prints_json(
    threaded: FakeSshServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cfg = threaded.config("box")
    code = cli.main(["discover", "--ssh-config", str(cfg), "box", "--json", "--trust-new-keys"])
    out, err = capsys.readouterr()
    assert code == 0, err
    fp = threaded.host_key.get_fingerprint("sha256")
    assert f"trusted box: ssh-ed25519 {fp}" in err
    data = json.loads(out)
    (host,) = data["hosts"]
    assert host["ok"] and host["facts"]["hostname"] == platform.node()
    app_file = tmp_path / "xdg" / "nfs-tuner" / "known_hosts"
    assert f"[127.0.0.1]:{threaded.port} ssh-ed25519" in app_file.read_text()

    # Second run: already trusted, nothing to report, summary format.
    code = cli.main(["discover", "--ssh-config", str(cfg), "box"])
    out, err = capsys.readouterr()
    assert code == 0 and "trusted" not in err
    assert out.startswith(f"box ({platform.node()})")


def test_cli_without_terminal_refuses_unknown_key(
    threaded: FakeSshServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False, raising=False)
    cfg = threaded.config("box")
    code = cli.main(["discover", "--ssh-config", str(cfg), "box", "--json"])
    out, err = capsys.readouterr()
    assert code == 1
    host = json.loads(out)["hosts"][0]
    assert host["error"]["type"] == "UnknownHostKey"
    assert threaded.host_key.get_fingerprint("sha256") in err
    assert "--trust-new-keys" in err


def test_cli_reports_each_failure_and_exits_non_zero(
    threaded: FakeSshServer, capsys: pytest.CaptureFixture[str]
) -> None:
    threaded.trust_host_key()
    cfg = threaded.config("box")
    code = cli.main(["discover", "--ssh-config", str(cfg), "box", "nowhere.invalid"])
    out, err = capsys.readouterr()
    assert code == 1
    assert out.startswith("box (")
    assert "nowhere.invalid: the name does not resolve" in err


def test_cli_list_hosts_and_missing_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "cfg"
    cfg.write_text("Host a b\nHost *\n")
    assert cli.main(["discover", "--ssh-config", str(cfg), "--list-hosts"]) == 0
    assert capsys.readouterr().out.split() == ["a", "b"]
    assert cli.main(["discover", "--ssh-config", str(tmp_path / "nope"), "a"]) == 2
    assert "no such file" in capsys.readouterr().err


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_prompt_shows_fingerprint_and_needs_yes(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.commands.discover import ask_tty
    from app.hosts import UnknownHostKey

    key = UnknownHostKey("srv", 2222, "ssh-ed25519", "SHA256:abc", "[srv]:2222 ssh-ed25519 AAAA")
    for answer, expected in (("y\n", True), ("yes\n", True), ("\n", False), ("no\n", False)):
        err = _Tty()
        monkeypatch.setattr("sys.stdin", _Tty(answer))
        monkeypatch.setattr("sys.stderr", err)
        assert ask_tty(key) is expected
        assert "SHA256:abc" in err.getvalue() and "[srv]:2222" in err.getvalue()
