"""Workload specs: validation, agent config, round trip through the store's dict."""

from __future__ import annotations

import dataclasses

import pytest

from experiments import workloads as w


def test_every_kind_round_trips_and_builds_an_agent_config() -> None:
    specs = [w.SeqWrite(), w.SeqRead(jobs=2), w.Rewrite(), w.RandRead(), w.RandWrite(io_size=1 << 20),
             w.Mixed(read_share=0.5), w.SmallFiles(layout="tree"), w.Tree(files=5), w.DirScaling(count=10),
             w.TcpSink(), w.TcpSource(host="10.0.0.2", port=5201, duration_s=5),
             w.Telemetry(devices=("sda",), nics=("eth0",), mounts=("/mnt/t",))]
    assert {s.kind for s in specs} == set(w.WORKLOAD_TYPES)
    for spec in specs:
        assert w.workload_from_dict(spec.to_dict()) == spec
        cfg = spec.to_agent_config("/mnt/t", hold_files=True)
        assert cfg["mode"] == spec.kind and cfg["dir"] == "/mnt/t" and cfg["interval"] == 0.25 and cfg["hold_files"]
        assert "duration_s" not in cfg and "interval_s" not in cfg


def test_config_carries_the_parameters_the_agent_reads() -> None:
    cfg = w.Mixed(block_size=8192, jobs=8, read_share=0.7, duration_s=30).to_agent_config("/m", start_at=100.0)
    assert cfg == {"mode": "mixed", "interval": 0.25, "duration": 30, "dir": "/m", "block_size": 8192,
                   "file_size": 1 << 30, "jobs": 8, "direct": False, "fsync": False, "seed": 42, "loop": False,
                   "read_share": 0.7, "start_at": 100.0}
    with pytest.raises(ValueError, match="unknown agent control"):
        w.SeqWrite().to_agent_config("/m", rm_rf=True)


def test_defaults_and_objectives() -> None:
    assert w.SeqWrite().fsync and w.SeqWrite().block_size == 1 << 20
    assert w.Mixed().read_share == 0.75 and w.Mixed().jobs == 4
    assert w.SeqRead.objective is w.Objective.SEQ_READ
    assert w.SeqWrite.objective is w.Objective.SEQ_WRITE
    assert w.SmallFiles.objective is w.Objective.SMALL_FILES
    assert w.Tree.objective is w.Objective.TREE and w.DirScaling.objective is w.Objective.DIR_SCALING
    assert {o.value for o in (w.Objective.SMALL_FILES, w.Objective.TREE, w.Objective.DIR_SCALING)} == w.OPS_OBJECTIVES
    assert w.Mixed.objective is w.Objective.MIXED
    assert w.TcpSink.objective is None and w.Telemetry.objective is None


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: w.SeqWrite(block_size=100), "block_size must be at least 512"),
        (lambda: w.SeqWrite(block_size=128 << 20), "at most"),
        (lambda: w.SeqWrite(block_size=1536 << 10, file_size=4 << 20), "multiple of block_size"),
        (lambda: w.SeqRead(block_size=6144, file_size=6144 * 4, direct=True), "multiple of 4096"),
        (lambda: w.SeqRead(loop=True), "needs duration_s"),
        (lambda: w.SeqRead(interval_s=0.01), "interval_s"),
        (lambda: w.SeqRead(duration_s=0), "duration_s must be positive"),
        (lambda: w.Mixed(read_share=1.5), "read_share"),
        (lambda: w.RandRead(jobs=0), "jobs must be at least 1"),
        (lambda: w.RandRead(jobs=4, io_size=4096), "io_size"),
        (lambda: w.SmallFiles(layout="deep"), "layout"),
        (lambda: w.DirScaling(count=0), "count"),
        (lambda: w.TcpSource(host="a b", port=1, size=1), "host"),
        (lambda: w.TcpSource(host="h", port=70000, size=1), "port"),
        (lambda: w.TcpSource(host="h", port=1), "size or duration_s"),
        (lambda: w.Telemetry(devices=("../sda",)), "plain names"),
        (lambda: w.Telemetry(mounts=("mnt",)), "absolute"),
    ],
)
def test_bad_values_fail_with_a_clear_message(build, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_specs_are_frozen_and_unknown_dict_entries_fail() -> None:
    spec = w.SeqWrite()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.block_size = 4096  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown workload kind"):
        w.workload_from_dict({"kind": "bonnie"})
    with pytest.raises(ValueError, match="no fields"):
        w.workload_from_dict({"kind": "seq_write", "colour": "red"})
