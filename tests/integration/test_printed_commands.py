"""Every command nfs-tuner prints for the admin to run is run here, exactly as printed.

The literal ones are found in the code's own strings (docstrings aside) and each is run
through the real parser and command; one that is not known here fails the inventory, so
a new printed command comes with its run. The ones made whole for a session (its
database, its SSH config: app.session.admin_commands) are taken from what a run printed:
a sweep a lost host stopped (`sweep --resume`), its `sessions show`, a study's `report`,
and a first contact's `discover --trust-new-keys` over real SSH (the in-process server).
"""

from __future__ import annotations

import ast
import asyncio
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

import app.commands.sweep as sweep_command
from app import cli
from app.events import EventBus
from app.hosts import HostPool, SshSettings
from app.session import Role, SessionError, TuningSession
from app.simulated import SimulatedHosts
from app.store import SessionState, Store
from app.sweep.events import TrialFinished
from app.sweep.ssh_hosts import SshHosts
from tests.integration.test_discover_fake import ThreadedFake
from tests.integration.test_ssh_support import FakeSshServer

REPO = Path(__file__).resolve().parents[2]
PRINTED = re.compile(r"`(nfs-tuner [^`]*)`")
# Every literal command the code prints, with the words a placeholder stands for; None: not a command to run.
LITERAL: dict[str, str | None] = {
    "nfs-tuner sessions list": "nfs-tuner sessions list",  # the help of `report ID`, `sessions show|export ID`
    "nfs-tuner helper": "nfs-tuner helper",  # NoSudo, a helper of another version
    "nfs-tuner helper --contract": "nfs-tuner helper --contract",  # the install instructions
    "nfs-tuner helper --server NAME": "nfs-tuner helper --server nfs1",  # the rendered helper's SERVERS line
    "nfs-tuner helper --server %s": "nfs-tuner helper --server nfs1",  # the helper's refusal of a server
    "nfs-tuner journal": "nfs-tuner journal",  # the helper's refusal: too many switch directories left
    "nfs-tuner completion bash": "nfs-tuner completion bash",  # each completion script's own header says
    "nfs-tuner completion zsh": "nfs-tuner completion zsh",  # how it was made
    "nfs-tuner completion fish": "nfs-tuner completion fish",
    # The helper's contract names the option a server is rendered in with (the line above runs it whole);
    # its text is part of the helper's digest, which every installed helper is checked against.
    "nfs-tuner helper --server": None,
    "nfs-tuner [--db DB] WORDS… [--ssh-config FILE]": None,  # admin_commands' own docstring-like help
}


def _printed_literals() -> dict[str, list[str]]:
    """Each backticked `nfs-tuner …` in a string of app/ or ui/ that is not a docstring, with where."""
    found: dict[str, list[str]] = {}
    for path in sorted([*(REPO / "app").rglob("*.py"), *(REPO / "ui").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                for m in PRINTED.finditer(node.value):
                    found.setdefault(m.group(1), []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def run_as_printed(command: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    argv = shlex.split(command)
    assert argv[0] == "nfs-tuner", command
    code = cli.main(argv[1:])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_literal_command_the_code_prints_is_known_here() -> None:
    found = _printed_literals()
    unknown = {c: where for c, where in found.items() if c not in LITERAL}
    assert not unknown, f"printed commands with no run in LITERAL: {unknown}"
    assert set(LITERAL) - set(found) <= {"nfs-tuner [--db DB] WORDS… [--ssh-config FILE]"}, "stale entries"


@pytest.mark.parametrize("command", sorted({c for c in LITERAL.values() if c is not None}))
def test_each_literal_command_runs_as_printed(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NFS_TUNER_DB", str(tmp_path / "sessions.db"))
    code, _, err = run_as_printed(command, capsys)
    assert code == 0, err
    assert "usage:" not in err and "error:" not in err


# --- commands made whole for a session ----------------------------------------------------------


@pytest.fixture
def simulated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[SimulatedHosts, list[Path | None]]]:
    """The headless commands' hosts, simulated (keys trusted); the SSH config each run was given is kept."""
    hosts = SimulatedHosts(speed=400.0)
    hosts.trusted.update(("nfs-server", "client1", "client2"))
    configs: list[Path | None] = []

    def host_side(args: object) -> SimulatedHosts:
        configs.append(sweep_command.ssh_config_of(args))  # type: ignore[arg-type]
        return hosts

    monkeypatch.setattr(sweep_command, "host_side", host_side)
    monkeypatch.setattr(hosts, "close", _no_close)  # one world across the first run and its resume
    monkeypatch.chdir(tmp_path)
    yield hosts, configs


async def _no_close() -> None:
    return None


def _lose_client_once(monkeypatch: pytest.MonkeyPatch, hosts: SimulatedHosts, trials: int) -> None:
    """client1 stops answering once ``trials`` trials of the first run have ended (as a pulled cable would)."""
    real = sweep_command.headless_session
    seen: list[TrialFinished] = []

    def session(args: object, store: Store, bus: EventBus) -> TuningSession:
        def on(event: TrialFinished) -> None:
            seen.append(event)
            if len(seen) == trials:
                hosts.gone.add("client1")

        bus.subscribe(on, TrialFinished)
        return real(args, store, bus)  # type: ignore[arg-type]

    monkeypatch.setattr(sweep_command, "headless_session", session)


def test_a_sweep_a_lost_host_stopped_resumes_with_the_command_it_printed(
        simulated: tuple[SimulatedHosts, list[Path | None]], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    hosts, configs = simulated
    db, config = tmp_path / "my sessions.db", tmp_path / "ssh config"  # spaces: the printed paths are quoted
    config.write_text("Host *\n")
    _lose_client_once(monkeypatch, hosts, 2)
    code = cli.main(["--db", str(db), "sweep", "--ssh-config", str(config), "--server", "nfs-server",
                     "--client", "client1", "--knob", "nfsd_threads=8,64", "--strategy", "grid", "--repetitions", "2",
                     "--max-repetitions", "2", "--duration", "20", "--no-ceilings", "--deadman-timeout", "10",
                     "--host-wait", "0"])  # stop at once, not after the default two minutes
    out, err = capsys.readouterr()
    assert code == 3, err
    before, after = out.split("paused:")
    (resume,) = PRINTED.findall(after)
    show = PRINTED.findall(before)[-1]
    assert resume.startswith("nfs-tuner --db ") and "sweep --resume 1 --ssh-config" in resume

    hosts.gone.clear()  # the host is back
    code, out, err = run_as_printed(resume, capsys)
    assert code == 0, err
    assert configs[-1] == config  # the hosts were reached through the SSH config the printed command named
    with Store(db, readonly=True) as store:
        (session,) = store.list_sessions()
        assert session.state is SessionState.COMPLETE
    code, out, err = run_as_printed(show, capsys)
    assert code == 0 and f"Session {session.id}" in out and "complete" in out, err


def test_a_studys_printed_commands_run_as_printed(
        simulated: tuple[SimulatedHosts, list[Path | None]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    db = tmp_path / "studies.db"
    code = cli.main(["--db", str(db), "study", "ladder", "--server", "nfs-server", "--client", "client1",
                     "--max-streams", "2", "--duration", "10", "--no-ceilings", "--file-size", "16"])
    out, err = capsys.readouterr()
    assert code == 0, err
    show, report = PRINTED.findall(out.splitlines()[-1])
    code, out, err = run_as_printed(show, capsys)
    assert code == 0 and "Load ladder" in out, err
    code, out, err = run_as_printed(report, capsys)
    assert code == 0, err
    written = Path(shlex.split(report)[shlex.split(report).index("--to") + 1])
    assert written.exists() and "<svg" in written.read_text(encoding="utf-8")


def test_a_first_contacts_trust_command_runs_as_printed_over_real_ssh(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # the app's known_hosts
    server = ThreadedFake(tmp_path)
    try:
        fake: FakeSshServer = server.fake
        config = fake.config("box")

        async def connect() -> None:
            hosts = SshHosts(HostPool(SshSettings(config_file=config, use_agent=False)))  # as the commands make it
            session = TuningSession(Store(tmp_path / "s.db"), hosts, EventBus())
            try:
                await session.connect("box", Role.CLIENT)
            finally:
                await hosts.close()
                session.store.close()

        with pytest.raises(SessionError) as refused:
            asyncio.run(connect())
        (command,) = PRINTED.findall(str(refused.value))
        assert command.startswith("nfs-tuner discover --trust-new-keys box --ssh-config ")
        code, _, err = run_as_printed(command, capsys)
        assert "trusted box: ssh-ed25519" in err, err
        asyncio.run(connect())  # the key is trusted now: no question, no refusal
    finally:
        server.close()
