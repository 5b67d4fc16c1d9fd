"""Sweeps in the lab: a tiny grid end to end, and a SIGKILL in the middle of one."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.events import EventBus
from app.hosts import HostPool, SshSettings
from app.knobs.deadman import token_of
from app.runner.kept_data import KEPT_PREFIX
from app.store import JournalState, SessionState, Store, StoreError, TrialState
from app.sweep import Progress, SweepEngine, SweepSpec, TrialFinished
from experiments.plan import Plan, Timing
from experiments.workloads import MIB
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab
REPO = Path(__file__).resolve().parents[2]
TIMING = Timing(setup_s=10.0, warmup_s=0.5, min_measure_s=2.0, max_measure_s=2.0)


def _spec() -> SweepSpec:
    plan = Plan(knobs={"rsize": (32768, 1048576)}, workloads=("seq_read",), strategy="grid", min_runs=1,
                max_runs=1, timing=TIMING)  # fmt: skip
    return SweepSpec("lab-server", ("lab-client1",), "/srv/nfs", plan, file_size=16 * MIB)


def _no_test_mounts(lab: LabHandle, store: Store, sid: int) -> bool:
    """None of this session's test mounts is still there (other sweeps may share the lab)."""
    mounted = lab.run("lab-client1", "findmnt -rn -o TARGET").stdout.split()
    ours = {e.target for e in store.journal(sid) if e.knob == "test_mount"}
    return bool(ours) and not ours & set(mounted)


def kept_left(lab: LabHandle, store: Store, sid: int) -> list[str]:
    """This session's kept read data still on the export (app.runner.kept_data; other sweeps may share the lab, and a
    run stopped for the server leaves its own until resumed)."""
    tokens = {t for e in store.journal(sid) if (t := token_of(e.detail)) is not None}
    assert tokens, "the session made no change: no journal token to look for"
    return [n for n in lab.run("lab-server", "ls -A /srv/nfs").stdout.split()
            if any(n.startswith(f"{KEPT_PREFIX}{t}-") for t in tokens)]


def run_tiny_sweep(lab: LabHandle, db: Path, bus: EventBus | None = None) -> int:
    """rsize 32k vs 1M, seq_read, one short trial each; returns the session id."""
    settings = SshSettings(config_file=lab.ssh_config, app_known_hosts=db.with_name("kh"))

    async def scenario() -> int:
        with Store(db) as store:
            async with HostPool(settings) as pool:
                return await SweepEngine(store, pool, bus or EventBus(), _spec(), deadman_timeout=30).run()

    return asyncio.run(scenario())


def test_tiny_sweep_stores_trials_with_samples_and_reverts(lab: LabHandle, lab_sessions: Path) -> None:
    bus = EventBus()
    events: list[object] = []
    bus.subscribe(events.append, TrialFinished)
    bus.subscribe(events.append, Progress)
    db = lab_sessions / "tiny.db"  # left for the review tests
    sid = run_tiny_sweep(lab, db, bus)
    with Store(db, readonly=True) as store:
        assert store.get_session(sid).state == SessionState.COMPLETE
        trials = store.trials(sid)
        assert sorted({t.config["rsize"] for t in trials}) == [32768, 1048576]  # then the put-back checks' runs
        for t in trials:
            assert t.state == TrialState.OK, t.reason
            assert t.summary["effective"]["rsize"] == str(t.config["rsize"])  # negotiated on the fresh mount
            assert t.summary["mean"] > 0 and t.summary["n"] >= 4
            assert len(store.load_samples(t.id)) >= t.summary["n"]
            assert len(store.load_telemetry(t.id).host) > 0
            print(f"\nrsize={t.config['rsize']}: {t.summary['mean'] / 1e6:.1f} MB/s over {t.summary['measured_s']:.1f} s")
        journal = store.journal(sid)
        assert journal and all(e.state == JournalState.REVERTED for e in journal)
        facts = {(f.host, f.role) for f in store.host_facts(sid)}
        assert {("lab-server", "server"), ("lab-client1", "client"),
                ("lab-client1", "ceiling"), ("lab-server", "ceiling")} <= facts  # fmt: skip
        recs = {r.objective: r for r in store.recommendations(sid)}
        assert "seq_read" in recs and recs["seq_read"].config.get("rsize") in (32768, 1048576)
    assert [type(e).__name__ for e in events].count("TrialFinished") == len(trials)
    last = [e for e in events if isinstance(e, Progress)][-1]
    assert last.done == last.total == len(trials)
    with Store(db, readonly=True) as store:
        assert _no_test_mounts(lab, store, sid)


def test_sigkill_leaves_an_interrupted_session_that_resumes(lab: LabHandle, tmp_path: Path, lab_sessions: Path) -> None:
    db = lab_sessions / "killed-and-resumed.db"  # left for the review tests
    argv = [sys.executable, "-m", "app", "--db", str(db), "sweep", "--ssh-config", str(lab.ssh_config),
            "--server", "lab-server", "--client", "lab-client1", "--export", "/srv/nfs",
            "--knob", "rsize=64k,1M", "--workload", "seq_read", "--repetitions", "1", "--duration", "3",
            "--file-size", "16", "--no-ceilings", "--deadman-timeout", "15"]  # fmt: skip
    # A short switch: the resume below waits for it to fire, not for the default minute.
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:  # kill once one trial is done and the next one has samples
            time.sleep(0.5)
            if not db.exists():
                continue
            try:
                reading = Store(db, readonly=True)
            except StoreError:  # the sweep made the file a moment ago: empty until its schema is written
                continue
            with reading as store:
                trials = store.trials(1) if store.list_sessions() else []
                done = [t for t in trials if t.state == TrialState.OK]
                running = [t for t in trials if t.state == TrialState.RUNNING]
                if done and running and len(store.load_samples(running[0].id)) >= 2:
                    break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        else:
            pytest.fail("the sweep never got to its second trial")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    with Store(db) as store:
        assert store.recover_interrupted() == [1]
        assert store.get_session(1).state == SessionState.INTERRUPTED
        trials = store.trials(1)
        ok = [t for t in trials if t.state == TrialState.OK]
        cut = [t for t in trials if t.state == TrialState.BROKEN]
        assert ok and len(cut) == 1 and cut[0].reason.startswith("interrupted")
        for t in trials:
            assert len(store.load_samples(t.id)) > 0  # the killed trial's samples up to the kill too
    # resume: the interrupted configuration is run again and the session completes
    settings = SshSettings(config_file=lab.ssh_config, app_known_hosts=tmp_path / "kh")

    async def resume() -> None:
        with Store(db) as store:
            async with HostPool(settings) as pool:
                await SweepEngine.for_session(store, pool, EventBus(), 1).run()

    asyncio.run(resume())
    with Store(db, readonly=True) as store:
        assert store.get_session(1).state == SessionState.COMPLETE
        ok_configs = sorted({t.config["rsize"] for t in store.trials(1, TrialState.OK)})
        assert ok_configs == [65536, 1048576]  # the killed one again, and the put-back checks' runs
        # the resume waited for the killed run's switch (or put its changes back itself)
        states = {e.state for e in store.journal(1)}
        assert states <= {JournalState.REVERTED, JournalState.REVERTED_BY_HOST}, store.journal(1)
        assert _no_test_mounts(lab, store, 1)
        # the killed run's kept read data went with the resumed run's own (their names carry the runs' journal tokens)
        assert kept_left(lab, store, 1) == []
