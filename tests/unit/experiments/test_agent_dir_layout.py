"""dir_scaling's layouts and its bounded rate-vs-entries curve, the real agent run locally."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.agent_protocol import AgentNotice, AgentStream
from tests.unit.experiments.test_agent_harness import AgentRun, leftovers, python_params, run_to_end


@pytest.fixture(params=python_params())
def python(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("layout", ["flat", "hashed"])
def test_a_run_sends_a_bounded_curve_and_removes_every_entry(python: str, tmp_path: Path, layout: str) -> None:
    run, code = run_to_end(python, {"mode": "dir_scaling", "dir": str(tmp_path), "count": 3000, "interval": 0.05,
                                    "layout": layout, "fanout": 16, "points": 50})  # fmt: skip
    points = run.of_type("point")
    assert code == 0 and len(points) == 50
    assert [p["entries"] for p in points] == list(range(60, 3001, 60))
    assert all(p["layout"] == layout and p["rate"] > 0 for p in points)
    deletes = [s for s in run.of_type("sample") if s["phase"] == "delete"]
    assert deletes and deletes[-1]["count"] == 0
    assert run.of_type("summary")[0]["phases"]["delete"]["ops"] == 3000
    assert leftovers(tmp_path) == []
    stream = AgentStream("c1")
    events = stream.feed(b"".join(json.dumps(x).encode() + b"\n" for x in run.seen))
    parsed = [e for e in events if isinstance(e, AgentNotice) and e.type == "point"]
    assert not stream.garbage and [e.data["entries"] for e in parsed] == [p["entries"] for p in points]


def test_the_hashed_layout_spreads_entries_over_the_fanout(python: str, tmp_path: Path) -> None:
    run = AgentRun(python, {"mode": "dir_scaling", "dir": str(tmp_path), "count": 600, "interval": 0.05,
                            "layout": "hashed", "fanout": 8, "pause_before": "delete"})  # fmt: skip
    try:
        run.until("paused")
        scale = [p for p in tmp_path.rglob("scale") if p.is_dir()]
        per_dir = sorted(sum(1 for _ in d.iterdir()) for d in scale[0].iterdir())
        assert len(per_dir) == 8 and sum(per_dir) == 600 and per_dir[0] > 30  # spread, not piled in one
        assert run.of_type("point") == []  # points: 0 (the default) sends none
        run.send(b"stop\n")
        run.rest()
        assert run.wait() == 0 and leftovers(tmp_path) == []
    finally:
        run.kill()


def test_points_are_capped_whatever_is_asked(python: str, tmp_path: Path) -> None:
    run, code = run_to_end(python, {"mode": "dir_scaling", "dir": str(tmp_path), "count": 1000, "interval": 0.05,
                                    "points": 10_000, "timed_delete": False})  # fmt: skip
    points = run.of_type("point")
    assert code == 0 and 0 < len(points) <= 200 and points[-1]["entries"] == 1000


def test_an_unknown_layout_is_refused_in_words(python: str, tmp_path: Path) -> None:
    run, code = run_to_end(python, {"mode": "dir_scaling", "dir": str(tmp_path), "count": 10, "layout": "btree"})
    assert code != 0 and "layout must be flat or hashed" in run.of_type("error")[0]["message"]
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("line", [
    b'{"type":"point","entries":-1,"rate":10}',
    b'{"type":"point","entries":true,"rate":10}',
    b'{"type":"point","entries":10,"rate":Infinity}',
    b'{"type":"point","entries":10,"rate":-5}',
    b'{"type":"point","entries":10}',
    b'{"type":"point","entries":10,"rate":1e400}',
    b'{"type":"point","entries":10,"rate":"fast"}',
    b'{"type":"point","entries":10,"rate":1,"layout":["x"]}',
    b'{"type":"point","entries":10,"rate":1,"seconds":-1}',
])  # fmt: skip
def test_a_hostile_point_is_a_counted_garbage_line(line: bytes) -> None:
    stream = AgentStream("c1")
    assert stream.feed(line + b"\n" + b'{"type":"point","entries":10,"rate":5.5}\n') and stream.garbage_count == 1


def test_the_workload_spec_carries_the_layout_to_the_agent_and_checks_it() -> None:
    from experiments import workloads as w

    cfg = w.DirScaling(count=10, layout="hashed", fanout=16, points=5).to_agent_config("/d")
    assert (cfg["layout"], cfg["fanout"], cfg["points"]) == ("hashed", 16, 5)
    assert w.workload_from_dict(w.DirScaling(layout="hashed").to_dict()) == w.DirScaling(layout="hashed")
    for bad in ({"layout": "btree"}, {"fanout": 0}, {"points": 201}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            w.DirScaling(**bad)
