"""One SSH connection per host, reused, with a bounded number of channels on it."""

from __future__ import annotations

import asyncio
import errno
import shlex
import socket
from collections.abc import Sequence
from pathlib import Path

import asyncssh

from app.hosts.errors import (
    command_text,
    AuthFailed,
    ChannelsExhausted,
    CommandTimeout,
    ConnectionLost,
    ConnectionRefused,
    ConnectTimeout,
    HostError,
    HostKeyError,
    HostUnresolvable,
    NoSudo,
    OutputTooLarge,
    SshError,
    SudoPasswordRejected,
    UnknownHostKey,
    ChangedHostKey,
)
from app.hosts.known_hosts import KnownHosts, user_known_hosts_files
from app.hosts.privilege import HELPER_PATH, PROBE_SCRIPT, Privilege, parse_probe
from app.hosts.remote_args import UnsafeValue, host_name
from app.hosts.process import MAX_OUTPUT, CommandResult, RemoteProcess, read_bounded
from app.hosts.settings import SshSettings


# What connecting says of a host whose link is down or whose address does not answer (a pulled cable).
_UNREACHABLE = frozenset({errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN, errno.ENETDOWN, errno.ECONNRESET,
                          errno.ECONNABORTED, errno.ETIMEDOUT})


class _Client(asyncssh.SSHClient):
    """Records why a host key was not trusted, and notices a lost connection."""

    def __init__(self, owner: HostConnection, known: KnownHosts) -> None:
        self._owner = owner
        self._known = known

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        # Called only for keys asyncssh found in none of the files: never trust here.
        self._owner._key_verdict = self._known.verdict(host, addr, port, key)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._owner._on_lost(exc)


class HostConnection:
    """A host reached over SSH by its name in the SSH config (or a plain hostname).

    ``run`` and ``start`` open channels on one shared connection, at most
    ``settings.max_channels`` at once; the connection is opened on first use and
    again after it was lost. A sudo password, if given, lives only in this object.
    """

    def __init__(
        self, name: str, settings: SshSettings | None = None, *, sudo_password: str | None = None
    ) -> None:
        self.name = name
        self.settings = settings or SshSettings()
        self._sudo_password = sudo_password
        self._conn: asyncssh.SSHClientConnection | None = None
        self._lost = False
        self._lost_reason = ""
        self._connect_lock = asyncio.Lock()
        self._channels = asyncio.Semaphore(self.settings.max_channels)
        self._privilege: Privilege | None = None
        self._key_verdict: UnknownHostKey | ChangedHostKey | None = None
        self.address: tuple[str, int] | None = None  # HostName and Port the config gave
        self.user: str = ""
        self.known_hosts: KnownHosts | None = None
        self.host_key_fingerprint: str = ""

    def __repr__(self) -> str:  # never shows the sudo password
        return f"HostConnection({self.name!r})"

    # -- connecting -------------------------------------------------------------

    def _config_arg(self) -> list[str] | tuple[()]:
        cfg = self.settings.config_file
        return [str(cfg)] if cfg is not None else ()

    async def _options(self) -> asyncssh.SSHClientConnectionOptions:
        options: asyncssh.SSHClientConnectionOptions = await asyncssh.SSHClientConnectionOptions.construct(
            config=self._config_arg(), host=self.name
        )
        return options

    async def resolve_known_hosts(self) -> KnownHosts:
        """The known_hosts files for this host: the user's (or config's) plus the app's."""
        if self.known_hosts is None:
            opts = await self._options()
            user_files = self.settings.user_known_hosts
            if user_files is None:
                listed = opts.known_hosts if isinstance(opts.known_hosts, list) else None
                user_files = user_known_hosts_files(listed)
            self.known_hosts = KnownHosts(self.settings.app_known_hosts_file, tuple(user_files))
            self.address = (str(opts.host), int(opts.port))
            self.user = str(opts.username)
        return self.known_hosts

    async def connect(self) -> None:
        """Open the connection if it is not open; raises a typed HostError."""
        async with self._connect_lock:
            if self._conn is not None and not self._lost:
                return
            self._conn = await self._open()
            self._lost = False
            self._lost_reason = ""

    async def _open(self) -> asyncssh.SSHClientConnection:
        try:  # the name reaches the SSH config's ProxyCommand (%h) and the resolver: never an option
            host_name(self.name)
        except UnsafeValue as exc:
            raise SshError(self.name, str(exc)) from None
        try:
            known = await self.resolve_known_hosts()
        except (asyncssh.Error, OSError, ValueError) as exc:
            raise SshError(self.name, f"cannot read the SSH config: {exc}") from exc
        assert self.address is not None
        host, port = self.address
        self._key_verdict = None
        kwargs: dict[str, object] = {
            "config": self._config_arg(),
            "known_hosts": known.load(),
            "client_factory": lambda: _Client(self, known),
            "connect_timeout": self.settings.connect_timeout,
            "login_timeout": self.settings.connect_timeout,
            "keepalive_interval": self.settings.keepalive_interval,
            "keepalive_count_max": self.settings.keepalive_count_max,
        }
        if not self.settings.use_agent:
            kwargs["agent_path"] = None
        if self.settings.client_keys is not None:
            kwargs["client_keys"] = [str(p) for p in self.settings.client_keys]
        try:
            conn = await asyncssh.connect(self.name, **kwargs)
        except asyncssh.HostKeyNotVerifiable as exc:
            if self._key_verdict is not None:
                raise self._key_verdict from None
            raise HostKeyError(self.name, f"{self.name}: host key refused: {exc.reason}") from exc
        except asyncssh.PermissionDenied as exc:
            raise AuthFailed(self.name, self.user, exc.reason) from exc
        except socket.gaierror as exc:
            raise HostUnresolvable(self.name, f"{host}: {exc.strerror}") from exc
        except ConnectionRefusedError as exc:
            raise ConnectionRefused(self.name, port) from exc
        except TimeoutError as exc:
            raise ConnectTimeout(self.name, port, self.settings.connect_timeout) from exc
        except asyncssh.ConnectionLost as exc:  # lost in the handshake: a host going away, as one lost later
            raise ConnectionLost(self.name, exc.reason) from exc
        except asyncssh.DisconnectError as exc:
            raise SshError(self.name, exc.reason) from exc
        except OSError as exc:
            if exc.errno in _UNREACHABLE:  # its link is down or its address unreachable: gone, for now
                raise ConnectionLost(self.name, exc.strerror or str(exc)) from exc
            raise SshError(self.name, str(exc) or type(exc).__name__) from exc
        except (asyncssh.Error, ValueError) as exc:
            raise SshError(self.name, str(exc) or type(exc).__name__) from exc
        key = conn.get_server_host_key()
        self.host_key_fingerprint = key.get_fingerprint("sha256") if key else ""
        return conn

    def _on_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._lost_reason = str(exc) if exc else "closed"

    async def trust(self, unknown: UnknownHostKey) -> Path:
        """Record an explicitly accepted host key in nfs-tuner's known_hosts."""
        known = await self.resolve_known_hosts()
        return known.trust(unknown)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            await conn.wait_closed()

    # -- privilege ----------------------------------------------------------------

    def set_sudo_password(self, password: str | None) -> None:
        """Hold the sudo password in memory for this session (never stored or logged)."""
        self._sudo_password = password or None
        self._privilege = None

    async def privilege(self) -> Privilege:
        """Root, passwordless sudo, sudo with the given password, or read-only (cached)."""
        if self._privilege is None:
            probe = await self.run(["sh", "-c", PROBE_SCRIPT])
            found = parse_probe(probe.stdout)
            if not found.is_root and not found.passwordless_sudo and self._sudo_password:
                check = await self._run_command(
                    ["true"], self._sudo_argv(["true"]), self._sudo_password + "\n", None
                )
                if not check.ok:
                    raise SudoPasswordRejected(self.name, found.user)
                found = Privilege(found.user, found.uid, False, True, sudo_password_accepted=True)
            self._privilege = found
        return self._privilege

    @property
    def known_privilege(self) -> Privilege | None:
        """The privilege found so far, without asking the host."""
        return self._privilege

    def adopt_probe(self, probe_output: str) -> Privilege | None:
        """Take the privilege from PROBE_SCRIPT output gathered elsewhere (saves a round trip).

        Ignored when a sudo password is set: that one must be verified by ``privilege()``.
        """
        if self._privilege is None and not self._sudo_password and probe_output.strip():
            self._privilege = parse_probe(probe_output)
        return self._privilege

    def _sudo_argv(self, argv: Sequence[str]) -> list[str]:
        # -k: ignore a cached sudo timestamp, so the password line is always consumed
        # by sudo and never reaches the command's stdin.
        return ["sudo", "-k", "-S", "-p", "", "--", *argv]

    async def _command(
        self, argv: Sequence[str], sudo: bool, input: str | None
    ) -> tuple[list[str], str | None]:
        """The argv to send and its stdin, wrapped in sudo as the privilege allows."""
        if not sudo:
            return list(argv), input
        priv = await self.privilege()
        if priv.is_root:
            return list(argv), input
        if priv.passwordless_sudo:
            return ["sudo", "-n", "--", *argv], input
        if priv.sudo_password_accepted and self._sudo_password:
            return self._sudo_argv(argv), self._sudo_password + "\n" + (input or "")
        if priv.via_helper:  # the admin's narrow rule: the helper checks the command and runs it
            return ["sudo", "-n", "--", HELPER_PATH, *argv], input
        raise NoSudo(self.name, priv.user, priv.sudoers_line())

    # -- commands -------------------------------------------------------------------

    async def _session(self) -> asyncssh.SSHClientConnection:
        await self.connect()
        assert self._conn is not None
        return self._conn

    async def _create(
        self, conn: asyncssh.SSHClientConnection, wire: Sequence[str]
    ) -> asyncssh.SSHClientProcess[str]:
        try:
            return await conn.create_process(
                shlex.join(wire), encoding="utf-8", errors="replace"
            )
        except asyncssh.ChannelOpenError as exc:
            if self._lost:
                raise ConnectionLost(self.name, self._lost_reason) from exc
            raise ChannelsExhausted(self.name, exc.reason) from exc
        except (asyncssh.DisconnectError, OSError) as exc:
            raise ConnectionLost(self.name, str(exc)) from exc

    async def run(
        self,
        argv: Sequence[str],
        *,
        sudo: bool = False,
        timeout: float | None = None,
        input: str | None = None,
    ) -> CommandResult:
        """Run argv (quoted with shlex.join, never a shell string) and collect its output."""
        wire, stdin = await self._command(argv, sudo, input)
        result = await self._run_command(argv, wire, stdin, timeout)
        if sudo and self._sudo_password and "incorrect password" in result.stderr:
            raise SudoPasswordRejected(self.name, self.user)
        return result

    async def _collect(self, proc: asyncssh.SSHClientProcess[str], stdin: str | None, argv: tuple[str, ...],
                       max_output: int) -> tuple[str, str]:  # fmt: skip
        """stdin in, stdout and stderr out, each read to its end or to ``max_output`` characters (OutputTooLarge)."""
        if stdin:
            proc.stdin.write(stdin)
            proc.stdin.write_eof()
        reads = [asyncio.ensure_future(read_bounded(s, max_output, self.name, argv)) for s in (proc.stdout, proc.stderr)]
        try:
            out, err = await asyncio.gather(*reads)
        finally:
            for r in reads:
                r.cancel()
        await proc.wait_closed()
        return out, err

    async def _run_command(
        self, argv: Sequence[str], wire: Sequence[str], stdin: str | None, timeout: float | None,
        max_output: int = MAX_OUTPUT,
    ) -> CommandResult:
        limit = self.settings.command_timeout if timeout is None else timeout
        shown = command_text(argv)  # what errors show: without sudo's flags or password
        async with self._channels:
            conn = await self._session()
            proc = await self._create(conn, wire)
            try:
                out, err = await asyncio.wait_for(self._collect(proc, stdin, tuple(argv), max_output), limit)
            except TimeoutError as exc:
                _stop(proc)
                raise CommandTimeout(self.name, shown, limit) from exc
            except OutputTooLarge:
                _stop(proc)
                raise
            except (asyncssh.DisconnectError, asyncssh.ConnectionLost, OSError, BrokenPipeError) as exc:
                raise ConnectionLost(self.name, f"while running {shown!r}") from exc
            finally:
                proc.close()
            if proc.exit_status is None and proc.exit_signal is None:
                await asyncio.sleep(0)  # let connection_lost land before judging
                if self._lost or conn.is_closed():
                    raise ConnectionLost(self.name, f"while running {shown!r}")
            status = proc.exit_status
            return CommandResult(status, str(out or ""), str(err or ""), tuple(argv))

    async def start(
        self, argv: Sequence[str], *, sudo: bool = False, input: str | None = None
    ) -> RemoteProcess:
        """Start argv with streaming stdin/stdout; see RemoteProcess for the protocol."""
        wire, stdin = await self._command(argv, sudo, input)
        await self._channels.acquire()
        try:
            conn = await self._session()
            proc = await self._create(conn, wire)
        except BaseException:
            self._channels.release()
            raise
        handle = RemoteProcess(
            self.name, tuple(argv), proc, self._channels.release, lambda: self._lost
        )
        if stdin:
            await handle.write(stdin)  # the sudo password first, if any
        return handle

    @property
    def connected(self) -> bool:
        return self._conn is not None and not self._lost


def _stop(proc: asyncssh.SSHClientProcess[str]) -> None:
    try:
        proc.send_signal("TERM")
    except (asyncssh.Error, OSError, ValueError):
        pass


__all__ = ["HostConnection", "HostError"]
