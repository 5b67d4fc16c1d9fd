from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
REPO = Path(__file__).resolve().parents[2]


def test_knobs_command_lists_every_knob_of_the_lab(lab: LabHandle, tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NFS_TUNER_DB": str(tmp_path / "s.db")}
    out = subprocess.run(
        [sys.executable, "-m", "app", "knobs", "--ssh-config", str(lab.ssh_config), "--server", "lab-server",
         "--client", "lab-client1", "--client", "lab-client2", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=180, env=env,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["knobs"]
    threads = lab.run("lab-server", "cat /proc/fs/nfsd/threads").stdout.strip()
    assert {"host": "lab-server", "knob": "nfsd_threads", "current": threads}.items() <= next(
        r for r in rows if r["knob"] == "nfsd_threads").items()
    clients = {r["host"] for r in rows if r["knob"] == "rsize"}
    assert clients == {"lab-client1", "lab-client2"}
    assert all(r["can_change"] for r in rows)
    assert {r["safety"] for r in rows} >= {"data-risk", "connectivity", "memory", "safe"}
