"""An in-process SSH server on 127.0.0.1 for the faults the lab cannot make on demand.

It executes commands with the local /bin/sh (so quoting is tested for real), fakes
sudo and the privilege probe, and has two built-ins: ``drop-connection`` (abort the
TCP connection mid-command) and ``hang`` (never answer).
"""

from __future__ import annotations

import asyncio
import codecs
import shlex
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import asyncssh

from app.hosts import HostConnection, SshSettings
from app.hosts.privilege import PROBE_SCRIPT

T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(coro)  # type: ignore[arg-type]


class _Auth(asyncssh.SSHServer):
    def __init__(self, fake: FakeSshServer) -> None:
        self._fake = fake

    def begin_auth(self, username: str) -> bool:
        return True

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        return username == self._fake.user and key == self._fake.client_key.convert_to_public()


@dataclass
class FakeSshServer:
    tmp: Path
    user: str = "tuner"
    uid: int = 1000
    sudo: str = "none"  # none | nopasswd | password
    sudo_password: str = "s3cret"
    workdir: Path | None = None
    commands: list[str] = field(default_factory=list)
    running: int = 0
    max_running: int = 0

    def __post_init__(self) -> None:
        self.host_key = asyncssh.generate_private_key("ssh-ed25519")
        self.client_key = asyncssh.generate_private_key("ssh-ed25519")
        self.key_file = self.tmp / "id_ed25519"
        self.client_key.write_private_key(str(self.key_file))
        self.key_file.chmod(0o600)
        self.user_known_hosts = self.tmp / "user_known_hosts"
        self.app_known_hosts = self.tmp / "app_known_hosts"
        self.workdir = self.workdir or self.tmp
        self.port = 0
        self._server: asyncssh.SSHAcceptor | None = None
        self._stopping = asyncio.Event()  # ends the commands that hang until the server stops

    async def start(self) -> FakeSshServer:
        self._server = await asyncssh.create_server(
            lambda: _Auth(self),
            "127.0.0.1",
            0,
            server_host_keys=[self.host_key],
            process_factory=self._handle,
            password_auth=False,
            kbdint_auth=False,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for _ in range(50):  # commands whose client went end (killed) and reap their child: no stray process
            if not self.running:
                break
            await asyncio.sleep(0.1)

    def config(self, alias: str = "fake", user: str | None = None, hostname: str = "127.0.0.1") -> Path:
        path = self.tmp / f"ssh_config_{alias}"
        path.write_text(
            f"Host {alias}\n"
            f"  HostName {hostname}\n"
            f"  Port {self.port}\n"
            f"  User {user or self.user}\n"
            f"  IdentityFile {self.key_file}\n"
            "  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {self.user_known_hosts}\n"
        )
        return path

    def settings(self, config: Path, **kw: object) -> SshSettings:
        return SshSettings(
            config_file=config,
            app_known_hosts=self.app_known_hosts,
            use_agent=False,
            connect_timeout=kw.pop("connect_timeout", 10.0),  # type: ignore[arg-type]
            **kw,  # type: ignore[arg-type]
        )

    def trust_host_key(self, key: asyncssh.SSHKey | None = None) -> None:
        """Write the (or a) host key to the user's known_hosts, as ssh would have."""
        key = key or self.host_key
        data = key.export_public_key("openssh").decode().split()
        with self.user_known_hosts.open("a") as out:
            out.write(f"[127.0.0.1]:{self.port} {data[0]} {data[1]}\n")

    def connection(self, alias: str = "fake", **kw: object) -> HostConnection:
        return HostConnection(alias, self.settings(self.config(alias), **kw))

    # -- the "host" --------------------------------------------------------------

    async def _handle(self, process: asyncssh.SSHServerProcess[str]) -> None:
        command = process.command or ""
        self.commands.append(command)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            status = await self._answer(process, command)
        finally:
            self.running -= 1
        if status is not None:
            process.exit(status)

    async def _answer(self, process: asyncssh.SSHServerProcess[str], command: str) -> int | None:
        argv = shlex.split(command)
        if argv == ["sh", "-c", PROBE_SCRIPT]:
            sudo_ok = "0" if self.sudo == "nopasswd" else "1"
            process.stdout.write(f"{self.user}\n{self.uid}\nsudo:{sudo_ok}\n")
            return 0
        if argv[:2] == ["sudo", "-n"]:
            if self.sudo != "nopasswd":
                process.stderr.write("sudo: a password is required\n")
                return 1
            argv = argv[3:]
        elif argv[:1] == ["sudo"] and "-S" in argv:
            given = (await process.stdin.readline()).rstrip("\n")
            if self.sudo != "password" or given != self.sudo_password:
                process.stderr.write("sudo: 1 incorrect password attempt\n")
                return 1
            argv = argv[argv.index("--") + 1 :]
        if argv == ["drop-connection"]:
            process.stdout.write("partial\n")
            await asyncio.sleep(0.05)
            process.channel.get_connection().abort()
            return None
        if argv == ["hang"]:
            await self._stopping.wait()
            return 1
        return await self._execute(process, shlex.join(argv))

    async def _execute(self, process: asyncssh.SSHServerProcess[str], command: str) -> int:
        child = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", command, cwd=str(self.workdir),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert child.stdin and child.stdout and child.stderr

        async def feed() -> None:
            assert child.stdin
            try:
                while True:
                    data = await process.stdin.read(65536)
                    if not data:
                        break
                    child.stdin.write(data.encode())
                    await child.stdin.drain()
            except (asyncssh.Error, OSError, BrokenPipeError, ConnectionResetError):
                pass
            finally:
                child.stdin.close()

        async def pump(src: asyncio.StreamReader, stream: asyncssh.SSHWriter[str]) -> None:
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            gone = False
            while data := await src.read(65536):  # chunks, as sshd sends them: lines of any length
                if gone:
                    continue  # read to the end, so the child's pipes close
                try:
                    stream.write(decoder.decode(data))
                    await stream.drain()
                except (asyncssh.Error, OSError):  # the client went: stop the command, as sshd would
                    gone = True
                    child.kill()

        feeder = asyncio.ensure_future(feed())
        try:
            await asyncio.gather(
                pump(child.stdout, process.stdout), pump(child.stderr, process.stderr)
            )
            status = await child.wait()
        except asyncio.CancelledError:
            child.kill()
            raise
        finally:
            feeder.cancel()
        return status


def test_fake_server_runs_commands_through_a_shell(tmp_path: Path) -> None:
    async def go() -> tuple[str, int | None]:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            res = await conn.run(["sh", "-c", "echo $((6*7)); exit 3"])
        finally:
            await conn.close()
            await fake.stop()
        return res.stdout, res.exit_status

    out, status = run(go())
    assert out == "42\n"
    assert status == 3
