"""The recommendation as the admin takes it away: after a tiny sweep, the rendered fstab
line mounts for real on a lab client with the recommended options, and data reads
through it. Only the mount point differs from the rendered line (a temp one, so the
lab's own mount stays as it is); everything made here is removed again.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import uuid
from pathlib import Path

import pytest

from app.events import EventBus
from app.hosts import HostPool, SshSettings
from app.snippets import context_for_session, render_all
from app.store import SessionState, Store
from app.sweep import SweepEngine, SweepSpec
from experiments.plan import Plan, Timing
from experiments.workloads import MIB
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
TIMING = Timing(setup_s=10.0, warmup_s=0.5, min_measure_s=2.0, max_measure_s=2.0)
CLIENT = os.environ.get("NFS_TUNER_LAB_CLIENT", "lab-client1")  # another lab client when that one is busy


def _tiny_sweep(lab: LabHandle, tmp_path: Path) -> tuple[int, dict[str, object], str, str]:
    """(session, recommended seq_read config, rendered fstab line, readahead udev rule)."""
    # today's values where the grid adds them (rsize 1 MiB, wsize 1 MiB, readahead 128): the recommendation is the
    # whole configuration to run, its changes (if any earned their place) among it
    plan = Plan(knobs={"rsize": (65536, 1048576), "wsize": (262144,), "read_ahead_kb": (2048,)},
                workloads=("seq_read",), strategy="ofat", min_runs=1, max_runs=1, timing=TIMING)  # fmt: skip
    spec = SweepSpec("lab-server", (CLIENT,), "/srv/nfs", plan, file_size=16 * MIB, measure_ceilings=False)
    settings = SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "kh")

    async def scenario() -> int:
        with Store(tmp_path / "s.db") as store:
            async with HostPool(settings) as pool:
                return await SweepEngine(store, pool, EventBus(), spec, deadman_timeout=30).run()

    sid = asyncio.run(scenario())
    with Store(tmp_path / "s.db", readonly=True) as store:
        assert store.get_session(sid).state == SessionState.COMPLETE
        recs = {r.objective: r for r in store.recommendations(sid)}
        assert "seq_read" in recs, recs
        config = dict(recs["seq_read"].config)
        snippets = {s.key: s for s in render_all(config, context_for_session(store, sid, "seq_read"))}
    return sid, config, snippets["fstab"].text.strip(), snippets["readahead-udev"].text


def test_the_rendered_fstab_line_mounts_with_the_recommended_options_and_reads(lab: LabHandle, tmp_path: Path) -> None:
    _, config, fstab, _ = _tiny_sweep(lab, tmp_path)
    assert config.get("rsize") in (65536, 1048576) and config.get("wsize") in (262144, 1048576), config
    source, _, fstype, options, dump, passno = fstab.split()
    assert fstype == "nfs" and source.endswith(":/srv/nfs") and (dump, passno) == ("0", "0"), fstab
    # the server as the session's facts know it, not the placeholder (the ceilings stored as
    # facts of the same hosts once hid their roles from the snippet context)
    assert not source.startswith("nfs-server:"), fstab
    assert f"rsize={config['rsize']}" in options.split(",") and f"wsize={config['wsize']}" in options.split(","), fstab

    tmp = lab.run(CLIENT, "mktemp -d /tmp/nfs-tuner-rec.XXXXXX").stdout.strip()
    point = f"{tmp}/mnt"
    name = f"nfs-tuner-rec-{uuid.uuid4().hex[:8]}.dat"
    q_point, q_tab = shlex.quote(point), shlex.quote(f"{tmp}/fstab")
    try:
        lab.run(CLIENT, f"mkdir {q_point}")
        lab.run(CLIENT, f"printf '%s\\n' {shlex.quote(' '.join([source, point, fstype, options, dump, passno]))} > {q_tab}")
        lab.run(CLIENT, f"mount --fstab {q_tab} {q_point}", timeout=120)

        # the kernel took the recommended options: /proc/mounts shows them for this mount
        mounts = lab.run(CLIENT, "cat /proc/mounts").stdout.splitlines()
        line = next((m for m in mounts if m.split()[1] == point), None)
        assert line is not None, mounts
        got = line.split()[3].split(",")
        for knob in ("rsize", "wsize"):
            assert f"{knob}={config[knob]}" in got, line
        assert "hard" in got, line

        # readahead as the snippet's note says for a mounted share
        bdi = f"/sys/class/bdi/$(mountpoint -d {q_point})/read_ahead_kb"
        lab.run(CLIENT, f"echo {int(config['read_ahead_kb'])} > {bdi}")  # type: ignore[call-overload]
        assert lab.run(CLIENT, f"cat {bdi}").stdout.strip() == str(config["read_ahead_kb"])

        # data goes through it: write 32 MiB, drop the caches, read it back with dd
        path = shlex.quote(f"{point}/{name}")
        lab.run(CLIENT, f"dd if=/dev/urandom of={path} bs=1M count=32 conv=fsync status=none", timeout=300)
        lab.run("lab-server", "sync; echo 3 > /proc/sys/vm/drop_caches")
        lab.run(CLIENT, "sync; echo 3 > /proc/sys/vm/drop_caches")
        read = lab.run(CLIENT, f"dd if={path} of=/dev/null bs=1M", timeout=300)
        m = re.search(r"(\d+) bytes .* copied, ([\d.]+) s", read.stderr)
        assert m and int(m.group(1)) == 32 * MIB, read.stderr
        print(f"\nrecommended {config}; read back {int(m.group(1)) / float(m.group(2)) / 1e6:.1f} MB/s through\n{fstab}")
        assert lab.run("lab-server", f"test -s /srv/nfs/{shlex.quote(name)}", check=False).returncode == 0
    finally:
        lab.run(CLIENT, f"rm -f {shlex.quote(point + '/' + name)}", check=False)
        lab.run(CLIENT, f"mountpoint -q {q_point} && umount {q_point}", check=False, timeout=120)
        lab.run(CLIENT, f"mountpoint -q {q_point} || rm -rf {shlex.quote(tmp)}", check=False)
        lab.run("lab-server", f"rm -f /srv/nfs/{shlex.quote(name)}", check=False)
    assert point not in lab.run(CLIENT, "findmnt -rn -o TARGET").stdout
    assert lab.run(CLIENT, f"test -e {shlex.quote(tmp)}", check=False).returncode != 0
    assert lab.run("lab-server", f"test -e /srv/nfs/{shlex.quote(name)}", check=False).returncode != 0
    assert "nfs-tuner-" not in lab.run(CLIENT, "findmnt -rn -o TARGET").stdout  # the sweep's test mounts too
