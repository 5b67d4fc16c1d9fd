"""A sentence about one host names it once: "nfs1: connection … refused", never "nfs1: nfs1: …"."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from app import cli
from app.hosts.errors import ConnectionRefused
from app.runner.errors import RunError
from app.vocabulary import about_host
from app.vocabulary.hosts import host_detail


def _closed_port() -> int:
    with socket.socket() as s:  # bound, never listening: a connect is refused at once
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_knobs_on_a_refused_host_names_each_host_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = _closed_port()
    config = tmp_path / "ssh_config"
    config.write_text("".join(f"Host {h}\n  HostName 127.0.0.1\n  Port {port}\n" for h in ("nfs1", "c1")))
    assert cli.main(["knobs", "--ssh-config", str(config), "--server", "nfs1", "--client", "c1"]) == 1
    err = capsys.readouterr().err
    assert f"nfs-tuner: nfs1: connection to port {port} was refused" in err
    assert f"nfs-tuner: c1: connection to port {port} was refused" in err
    assert "nfs1: nfs1" not in err and "c1: c1" not in err


def test_a_run_error_wrapping_a_host_error_names_the_host_once() -> None:
    refused = ConnectionRefused("c1", 22)
    assert str(RunError("c1", str(refused))) == str(refused)
    wrapped = RunError("c1", f"could not start the load agent: {host_detail('c1', str(refused))}")
    assert str(wrapped).startswith("c1: could not start the load agent: connection to port 22 was refused")
    assert str(wrapped).count("c1") == 1
    assert about_host("", "no host") == "no host" and about_host("c2", str(refused)).startswith("c2: c1: ")
