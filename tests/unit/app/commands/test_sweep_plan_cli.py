"""``nfs-tuner sweep`` without ``--knob``, ``--dry-run``, ``--budget``, ``--use`` and ``--json``: the real parser
and command over the demo's simulated hosts (the only thing swapped for SSH)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.knobs.catalog import SPECS
from app import cli
from app.commands import sweep
from app.simulated import SimulatedHosts
from app.store import Store

HOSTS = ["--server", "nfs-server", "--client", "client1", "--client", "client2"]


class CountingHosts(SimulatedHosts):
    """The demo's hosts, trusted, counting what touches them."""

    def __init__(self) -> None:
        super().__init__(speed=4000.0)
        self.trusted |= {"nfs-server", "client1", "client2"}
        self.discovered = 0
        self.ceilings = 0

    async def discover(self, host: str) -> Any:
        self.discovered += 1
        return await super().discover(host)

    async def tcp_ceiling(self, *args: Any, **kwargs: Any) -> Any:
        self.ceilings += 1
        return await super().tcp_ceiling(*args, **kwargs)


@pytest.fixture
def hosts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CountingHosts:
    simulated = CountingHosts()
    monkeypatch.setattr(sweep, "HostPool", lambda settings: None)
    monkeypatch.setattr(sweep, "SshHosts", lambda pool: simulated)
    monkeypatch.setattr(cli, "log_dir", lambda: tmp_path / "logs")
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    return simulated


def _sweep(capsys: pytest.CaptureFixture[str], db: Path, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["--db", str(db), "sweep", *HOSTS, *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _sessions(db: Path) -> int:
    with Store(db) as store:
        return len(store.list_sessions())


def test_a_dry_run_says_the_diagnosis_the_plan_its_changes_and_time_and_changes_nothing(
        hosts: CountingHosts, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # fmt: skip
    code, out, err = _sweep(capsys, tmp_path / "s.db", "--dry-run")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Measuring the baseline for the diagnosis (seq_read, seq_write)")
    assert "  What limits the hosts today: the export's flush cost." in lines
    assert "Plan (proposed): seq_read, seq_write; guided; budget 30 min" in lines
    plan = lines[lines.index("Plan (proposed): seq_read, seq_write; guided; budget 30 min"):]
    assert plan[1].startswith("  [x] stripe_cache_size = 256, 1024, 4096, 8192")
    assert "RAID-6 and large writes in the plan: stripe_cache_size" in plan[2]
    assert any(x.startswith("  [ ] nfsd_threads") and "threads waited 0.4 % of the time" in x for x in plan)
    assert "    stripe_cache_size at /sys/block/md0/md/stripe_cache_size: today 256, tries 256, 1024, 4096, 8192" in lines
    # 8 s around each trial leaves the budget 30 s of measuring per trial (10 s when it was planned at 20 s)
    assert any(x.startswith("Estimate: 47 trials, about 27 min 36 s") and "to fit 30 min: 30 s measured" in x
               for x in lines)
    assert lines[-1] == sweep.sweep_plan.DRY_RUN_DONE
    assert _sessions(tmp_path / "s.db") == 0  # no session, no journal: nothing was changed


def test_the_budget_runs_from_connect_the_plan_gets_what_the_baseline_left(
        hosts: CountingHosts, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(sweep, "time", SimpleNamespace(monotonic=lambda: 1000.0))  # connect
    monkeypatch.setattr(sweep.sweep_plan, "time", SimpleNamespace(monotonic=lambda: 1100.0))  # after the baseline
    code, out, err = _sweep(capsys, tmp_path / "s.db", "--dry-run", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["plan"]["budget_s"] == 28 * 60 and data["plan"]["before_s"] == 120  # 1 min 40 s: about 2 min
    assert data["estimate"]["seconds"] <= 28 * 60
    code, out, err = _sweep(capsys, tmp_path / "s.db", "--dry-run")
    assert "Plan (proposed): seq_read, seq_write; guided; budget 28 min (of 30 min: connecting and the baseline took " \
           "about 2 min)" in out.splitlines()  # fmt: skip


def test_a_dry_runs_json_carries_the_diagnosis_the_plan_and_the_reasons(
        hosts: CountingHosts, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # fmt: skip
    code, out, err = _sweep(capsys, tmp_path / "s.db", "--dry-run", "--json", "--use", "small_files", "--budget", "1h")
    assert code == 0, err
    data = json.loads(out)
    assert data["dry_run"] and data["diagnosis"]["limits"] == ["flush_cost"]
    plan = data["plan"]
    assert plan["proposed"] and plan["workloads"] == ["small_files", "seq_read"] and plan["budget_s"] == 3600
    knobs = {k["knob"]: k for k in plan["knobs"]}
    assert knobs["export_wdelay"]["in_plan"] and "no_wdelay commits each at once" in knobs["export_wdelay"]["reason"]
    assert not knobs["export_sync"]["ticked"] and "opt-in" in knobs["export_sync"]["reason"]
    assert all(k["reason"] for k in plan["knobs"]) and len(plan["knobs"]) == len(SPECS)
    assert [h["host"] for h in data["changes"]] == ["nfs-server", "client1", "client2"]
    assert data["estimate"]["trials"] > 0 and data["estimate"]["seconds"] <= 3600
    assert "Measuring the baseline" in err  # the progress on stderr; stdout is the JSON alone


def test_given_knobs_are_not_measured_first_and_keep_the_diagnosis_reasons(
        hosts: CountingHosts, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # fmt: skip
    code, out, _ = _sweep(capsys, tmp_path / "s.db", "--knob", "nfsd_threads=8,64", "--dry-run")
    assert code == 0 and hosts.ceilings == 0  # no baseline for a plan the admin gave
    assert "  Not measured yet: the proposal rests on the hosts' facts alone." in out
    assert "Plan (as given by --knob): seq_read; guided" in out
    assert "  [x] nfsd_threads = 8, 64" in out and "thread waits not measured" in out


def test_a_budget_the_plan_cannot_fit_is_refused_in_words_before_any_change(
        hosts: CountingHosts, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # fmt: skip
    code, _, err = _sweep(capsys, tmp_path / "s.db", "--budget", "5m")
    assert code == 1
    assert "the plan does not fit 5 min even with 10 s measured per trial" in err
    assert "--budget TIME for the time, --use or --workload for the workloads" in err and "Traceback" not in err
    assert _sessions(tmp_path / "s.db") == 0


def test_a_plan_beyond_any_budget_is_refused_before_a_host_is_touched(
        hosts: CountingHosts, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # fmt: skip
    grid = ["--strategy", "grid", "--knob", "rsize=4K,8K,16K,32K,64K,128K,256K,512K,1M",
            "--knob", "wsize=4K,8K,16K,32K,64K,128K,256K,512K,1M", "--knob", "read_ahead_kb=0,128,1024,4096,16384,65536",
            "--knob", "nfsd_threads=1,2,4,8,16,32,64,128", "--knob", "nconnect=1,2,4,8,16"]  # fmt: skip
    code, _, err = _sweep(capsys, tmp_path / "s.db", *grid)
    assert code == 2 and "far beyond any run" in err and hosts.discovered == 0


def test_a_bad_budget_is_a_usage_error(hosts: CountingHosts, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _sweep(capsys, tmp_path / "s.db", "--budget", "45")
    assert code == 2 and "argument --budget: give a time in hours, minutes or seconds" in err
    assert hosts.discovered == 0


def test_without_knobs_the_proposed_plan_runs_and_its_json_says_why(
        hosts: CountingHosts, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # fmt: skip
    code, out, err = _sweep(capsys, tmp_path / "s.db", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["state"] == "complete" and data["diagnosis"]["headline"].startswith("What limits")
    assert [k["knob"] for k in data["plan"]["knobs"] if k["in_plan"]] == ["stripe_cache_size", "read_ahead_kb"]
    assert "Plan (proposed)" in err  # said before the first trial
    assert hosts.ceilings == 2  # the baseline's, once per client: the run did not measure them again
    with Store(tmp_path / "s.db") as store:
        assert not store.unreverted_journal()


def test_a_dry_run_never_resumes_a_session(hosts: CountingHosts, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _sweep(capsys, tmp_path / "s.db", "--resume", "3", "--dry-run")
    assert code == 2 and "--dry-run cannot go with --resume" in err and hosts.discovered == 0
