"""Errors name the command they were running without pasting an inline script of thousands of characters."""

from __future__ import annotations

from importlib import resources

from app.hosts.errors import ConnectionLost, command_text

SWITCH_SOURCE = resources.files("app.knobs").joinpath("deadman_host.py").read_text(encoding="utf-8")


def test_a_long_argument_shows_as_its_first_line_and_length() -> None:
    argv = ["python3", "-I", "-S", "-c", SWITCH_SOURCE, "write", "/run/nfs-tuner/ab12", "restore.json"]
    shown = command_text(argv)
    assert shown.startswith("python3 -I -S -c '<") and shown.endswith("write /run/nfs-tuner/ab12 restore.json")
    assert f"({len(SWITCH_SOURCE):,} characters)>" in shown and len(shown) < 200
    assert command_text(["tee", "/proc/fs/nfsd/threads"]) == "tee /proc/fs/nfsd/threads"
    assert command_text(["echo", "a b; c"]) == "echo 'a b; c'"  # still quoted as a shell would read it
    message = str(ConnectionLost("lab-server", f"while running {shown!r}"))
    assert "lab-server: the SSH connection was lost" in message and len(message) < 500
