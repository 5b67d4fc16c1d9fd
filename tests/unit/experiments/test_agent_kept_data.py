"""A read's data set kept on the export from one trial to the next (config keep_data): the real agent, on
Python 3.12 and 3.6, laying out once and reading what it laid out the next time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.unit.experiments.test_agent_harness import leftovers, python_params, run_to_end

MIB = 1 << 20
KEEP = ".nfs-tuner-kept-0a1b2c3d4e5f-0"


@pytest.fixture(params=python_params())
def python(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.mark.parametrize(("mode", "names"), [("seq_read", ["seqr.0", "seqr.1"]), ("rand_read", ["rand.0"])])
def test_the_second_trial_reads_the_data_set_the_first_laid_out(python: str, tmp_path: Path, mode: str,
                                                                 names: list[str]) -> None:  # fmt: skip
    cfg = {"mode": mode, "dir": str(tmp_path), "file_size": 4 * MIB, "jobs": 2, "keep_data": KEEP, "io_size": MIB}
    first, code = run_to_end(python, cfg)
    assert code == 0 and "data_kept" not in first.of_type("summary")[0]
    kept = tmp_path / KEEP
    assert sorted(os.listdir(kept)) == names and all((kept / n).stat().st_size == 4 * MIB for n in names)
    made = {n: (kept / n).stat().st_mtime_ns for n in names}
    second, code = run_to_end(python, cfg)
    summary = second.of_type("summary")[0]
    assert code == 0 and summary["data_kept"] == 4 * MIB * len(names)  # laid out by none of the second's writes
    assert {n: (kept / n).stat().st_mtime_ns for n in names} == made
    assert summary["bytes_read"] > 0 and summary["bytes_written"] == 0
    assert leftovers(tmp_path) == [KEEP, *(f"{KEEP}/{n}" for n in names)]  # the agent's own directory went


def test_a_data_set_of_another_size_or_cut_short_is_laid_out_again(python: str, tmp_path: Path) -> None:
    kept = tmp_path / KEEP
    kept.mkdir(mode=0o700)
    (kept / "seqr.0").write_bytes(b"x" * MIB)  # another trial's size
    (kept / "seqr.1.part").write_bytes(b"x" * 10)  # a layout cut short
    run, code = run_to_end(python, {"mode": "seq_read", "dir": str(tmp_path), "file_size": 2 * MIB, "jobs": 2,
                                    "keep_data": KEEP})  # fmt: skip
    assert code == 0 and "data_kept" not in run.of_type("summary")[0]
    assert sorted(os.listdir(kept)) == ["seqr.0", "seqr.1"] and (kept / "seqr.0").stat().st_size == 2 * MIB


@pytest.mark.parametrize("name", ["../etc", ".nfs-tuner-kept-/x", "data", ".nfs-tuner-kept-a b", 7])
def test_a_keep_name_not_of_ours_is_refused_before_anything_is_made(python: str, tmp_path: Path, name: object) -> None:
    run, code = run_to_end(python, {"mode": "seq_read", "dir": str(tmp_path), "file_size": MIB, "keep_data": name})
    assert code == 1 and "keep_data must be a name starting with .nfs-tuner-kept-" in run.of_type("error")[0]["message"]
    assert leftovers(tmp_path) == []


def test_a_kept_name_that_is_not_our_directory_is_refused(python: str, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / KEEP).symlink_to(tmp_path / "elsewhere")  # planted: the data would go where the link points
    run, code = run_to_end(python, {"mode": "seq_read", "dir": str(tmp_path), "file_size": MIB, "keep_data": KEEP})
    assert code == 1 and "is not a directory this login made" in run.of_type("error")[0]["message"]
    assert os.listdir(tmp_path / "elsewhere") == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving the directory to another user needs root")
def test_a_kept_directory_another_user_owns_is_refused(python: str, tmp_path: Path) -> None:
    (tmp_path / KEEP).mkdir(mode=0o777)
    os.chown(tmp_path / KEEP, 12345, 12345)  # made by someone else on the export: their files are not our data set
    run, code = run_to_end(python, {"mode": "seq_read", "dir": str(tmp_path), "file_size": MIB, "keep_data": KEEP})
    assert code == 1 and "is not a directory this login made" in run.of_type("error")[0]["message"]
    assert os.listdir(tmp_path / KEEP) == []


def test_the_agent_and_the_run_name_the_kept_directory_alike() -> None:
    """The agent is a standalone program on the hosts and cannot import the app: the two prefixes are held together here."""
    from app.runner.kept_data import KEPT_PREFIX, kept_name
    from experiments import agent

    assert agent.KEPT_PREFIX == KEPT_PREFIX
    assert agent.kept_dir({"dir": "/mnt/t", "keep_data": kept_name("0a1b2c", 3)}) == "/mnt/t/.nfs-tuner-kept-0a1b2c-3"
