"""Faults and safety of the host layer against the in-process SSH server."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import asyncssh
import pytest

from app.hosts import (
    AuthFailed,
    ChangedHostKey,
    CommandTimeout,
    ConnectionLost,
    ConnectionRefused,
    ConnectTimeout,
    HostConnection,
    HostPool,
    HostUnresolvable,
    NoSudo,
    PrivilegeMode,
    SudoPasswordRejected,
    UnknownHostKey,
)
from tests.integration.test_ssh_support import FakeSshServer, run


@pytest.fixture(autouse=True)
def _no_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


def test_unknown_key_is_typed_then_trusting_connects(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        conn = fake.connection()
        try:
            with pytest.raises(UnknownHostKey) as caught:
                await conn.connect()
            err = caught.value
            assert err.host == "127.0.0.1"
            assert err.port == fake.port
            assert err.key_type == "ssh-ed25519"
            assert err.fingerprint == fake.host_key.get_fingerprint("sha256")
            assert err.fingerprint.startswith("SHA256:")
            assert err.fingerprint in str(err)
            assert not fake.app_known_hosts.exists()

            written = await conn.trust(err)
            assert written == fake.app_known_hosts
            assert f"[127.0.0.1]:{fake.port} ssh-ed25519 " in written.read_text()
            res = await conn.run(["echo", "hello"])
            assert res.stdout == "hello\n"
            assert conn.host_key_fingerprint == err.fingerprint
            # A fresh connection object trusts it too: the key is on disk, not in memory.
            again = fake.connection()
            assert (await again.run(["true"])).ok
            await again.close()
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_changed_key_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.user_known_hosts.write_text("# comment\notherhost ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJdD7y3aLq454yWBdwLWbieU1ebz9/cu7/QEXn9OIeZJ\n")
        fake.trust_host_key(asyncssh.generate_private_key("ssh-ed25519"))  # line 3: a stale key
        conn = fake.connection()
        try:
            with pytest.raises(ChangedHostKey) as caught:
                await conn.connect()
            err = caught.value
            assert err.known_at == ((fake.user_known_hosts, 3),)
            assert err.fingerprint == fake.host_key.get_fingerprint("sha256")
            text = str(err)
            assert "man-in-the-middle" in text
            assert f"{fake.user_known_hosts}:3" in text
            assert not conn.connected
            # Refusal does not write anything: trusting is only for unknown keys.
            assert not fake.app_known_hosts.exists()
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_known_key_in_user_file_connects_without_asking(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            assert (await conn.run(["id", "-u"])).ok
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_wrong_user_is_auth_failed(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = HostConnection("fake", fake.settings(fake.config(user="intruder")))
        try:
            with pytest.raises(AuthFailed) as caught:
                await conn.connect()
            assert caught.value.user == "intruder"
            assert "authorized_keys" in str(caught.value)
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_wrong_key_is_auth_failed(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        other = tmp_path / "other_key"
        asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(other))
        other.chmod(0o600)
        conn = HostConnection("fake", fake.settings(fake.config(), client_keys=(other,)))
        try:
            with pytest.raises(AuthFailed):
                await conn.connect()
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_refused_port(tmp_path: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    cfg = tmp_path / "cfg"
    cfg.write_text(f"Host closed\n  HostName 127.0.0.1\n  Port {port}\n")

    async def go() -> None:
        conn = HostConnection("closed", FakeSshServer(tmp_path).settings(cfg))
        with pytest.raises(ConnectionRefused) as caught:
            await conn.connect()
        assert caught.value.port == port
        assert "sshd" in str(caught.value)

    run(go())


def test_timeout_on_a_listener_that_never_answers(tmp_path: Path) -> None:
    async def go() -> None:
        held: list[asyncio.StreamWriter] = []

        async def silent(_r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            held.append(w)  # accept, then say nothing (no SSH banner)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        cfg = tmp_path / "cfg"
        cfg.write_text(f"Host mute\n  HostName 127.0.0.1\n  Port {port}\n")
        conn = HostConnection(
            "mute", FakeSshServer(tmp_path).settings(cfg, connect_timeout=0.5)
        )
        try:
            with pytest.raises(ConnectTimeout) as caught:
                await conn.connect()
            assert caught.value.port == port
        finally:
            for w in held:
                w.close()
            server.close()
            await server.wait_closed()

    run(go())


def test_unresolvable_name(tmp_path: Path) -> None:
    cfg = tmp_path / "empty_cfg"
    cfg.write_text("")

    async def go() -> None:
        conn = HostConnection("no-such-host.invalid", FakeSshServer(tmp_path).settings(cfg))
        with pytest.raises(HostUnresolvable) as caught:
            await conn.connect()
        assert "no-such-host.invalid" in str(caught.value)

    run(go())


def test_no_sudo_gives_sudoers_line(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path, sudo="none").start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            priv = await conn.privilege()
            assert priv.mode is PrivilegeMode.READ_ONLY
            assert not priv.can_change
            assert priv.sudoers_line() == "tuner ALL=(root) NOPASSWD: /usr/local/sbin/nfs-tuner-helper"
            with pytest.raises(NoSudo) as caught:
                await conn.run(["cat", "/proc/fs/nfsd/threads"], sudo=True)
            assert "tuner ALL=(root) NOPASSWD:" in str(caught.value)
            # Nothing was sent through sudo.
            assert not any(c.startswith("sudo") for c in fake.commands)
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_passwordless_sudo_prefixes_sudo_n(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path, sudo="nopasswd").start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            assert (await conn.privilege()).mode is PrivilegeMode.SUDO
            res = await conn.run(["echo", "as root"], sudo=True)
            assert res.stdout == "as root\n"
            assert fake.commands[-1] == "sudo -n -- echo 'as root'"
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_sudo_password_goes_over_stdin_only(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path, sudo="password").start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            conn.set_sudo_password("s3cret")
            assert (await conn.privilege()).mode is PrivilegeMode.SUDO_PASSWORD
            res = await conn.run(["cat"], sudo=True, input="payload\n")
            assert res.stdout == "payload\n"  # the password line was consumed by sudo
            assert all("s3cret" not in c for c in fake.commands)
            assert "s3cret" not in repr(conn)
            bad = fake.connection("fake2")
            bad.set_sudo_password("wrong")
            with pytest.raises(SudoPasswordRejected):
                await bad.privilege()
            await bad.close()
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_connection_dropping_mid_command(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            with pytest.raises(ConnectionLost):
                await conn.run(["drop-connection"])
            assert not conn.connected
            # The next command reconnects.
            assert (await conn.run(["echo", "back"])).stdout == "back\n"
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_command_timeout(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            with pytest.raises(CommandTimeout) as caught:
                await conn.run(["hang"], timeout=0.3)
            assert caught.value.command == "hang"
            assert (await conn.run(["echo", "still usable"])).ok
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_shell_characters_are_quoted_never_executed(tmp_path: Path) -> None:
    nasty = "x; touch PWNED $(touch PWNED2) `touch PWNED3` && echo hi > PWNED4 | cat"

    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            res = await conn.run(["touch", nasty])
            assert res.ok
            res = await conn.run(["printf", "%s", "$HOME'\"\\"])
            assert res.stdout == "$HOME'\"\\"
        finally:
            await conn.close()
            await fake.stop()

    run(go())
    assert (tmp_path / nasty).exists()  # one file with the whole odd name
    for name in ("PWNED", "PWNED2", "PWNED3", "PWNED4"):
        assert not (tmp_path / name).exists()


def test_channels_are_bounded_and_connection_reused(tmp_path: Path) -> None:
    async def go() -> FakeSshServer:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection(max_channels=3)
        try:
            results = await asyncio.gather(*(conn.run(["sleep", "0.1"]) for _ in range(12)))
            assert all(r.ok for r in results)
        finally:
            await conn.close()
            await fake.stop()
        return fake

    fake = run(go())
    assert len(fake.commands) == 12
    assert 1 < fake.max_running <= 3


def test_streaming_process(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection(max_channels=2)
        try:
            script = 'while read line; do echo "got $line"; done; echo bye'
            async with await conn.start(["sh", "-c", script]) as proc:
                await proc.write("one\n")
                assert await proc.readline() == "got one\n"
                await proc.write("two\n")
                proc.write_eof()
                lines = [line async for line in proc]
                assert lines == ["got two\n", "bye\n"]
                result = await proc.wait()
                assert result.exit_status == 0
            # The channel slot came back: two more commands fit in a limit of 2.
            both = await asyncio.gather(conn.run(["true"]), conn.run(["true"]))
            assert all(r.ok for r in both)
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_pool_one_connection_per_name_and_errors_as_results(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        cfg = fake.config("good")
        async with HostPool(fake.settings(cfg)) as pool:
            assert pool.get("good") is pool["good"]
            out = await pool.each(
                ["good", "bad.invalid", "good"], lambda c: c.run(["echo", c.name])
            )
            assert list(out) == ["good", "bad.invalid"]
            good = out["good"]
            assert not isinstance(good, Exception) and good.stdout == "good\n"
            assert isinstance(out["bad.invalid"], HostUnresolvable)
        await fake.stop()

    run(go())


def test_streaming_through_sudo_with_password(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path, sudo="password").start()
        fake.trust_host_key()
        conn = fake.connection()
        conn.set_sudo_password("s3cret")
        try:
            async with await conn.start(["cat"], sudo=True) as proc:
                await proc.write("sample 1\n")
                assert await proc.readline() == "sample 1\n"  # not the password
                proc.write_eof()
                assert (await proc.wait()).exit_status == 0
            assert fake.commands[-1] == "sudo -k -S -p '' -- cat"
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_streaming_sees_connection_loss(tmp_path: Path) -> None:
    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            proc = await conn.start(["drop-connection"])
            with pytest.raises(ConnectionLost):
                async for _line in proc:
                    pass
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_a_host_answering_without_end_is_stopped_at_the_cap_with_bounded_memory(tmp_path: Path) -> None:
    """issue 28: a host answering `cat /proc/fs/nfsd/threads` with 400 MiB grew the controller to 869 MiB."""
    import tracemalloc

    from app.hosts import OutputTooLarge

    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            assert (await conn.run(["true"])).ok  # connected before measuring
            tracemalloc.start()
            try:
                with pytest.raises(OutputTooLarge) as caught:
                    await conn.run(["sh", "-c", "yes 8 | head -c 100000000"], timeout=60)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert "sent more than 16 MiB" in str(caught.value) and caught.value.host == "fake"
            assert peak < 80 << 20, peak  # the cap and asyncssh's window, not the whole answer
            assert (await conn.run(["echo", "still usable"])).stdout == "still usable\n"
        finally:
            await conn.close()
            await fake.stop()

    run(go())


def test_a_streamed_line_without_end_comes_in_bounded_pieces(tmp_path: Path) -> None:
    from app.hosts.process import MAX_LINE

    async def go() -> None:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            proc = await conn.start(["sh", "-c", f"head -c {3 * MAX_LINE + 10} /dev/zero | tr '\\\\0' x; echo; echo ok"])
            async with proc:
                lines = [line async for line in proc]
            assert all(len(line) <= MAX_LINE for line in lines) and lines[-1] == "ok\n"
            assert sum(len(line) for line in lines) == 3 * MAX_LINE + 10 + 1 + 3
        finally:
            await conn.close()
            await fake.stop()

    run(go())
