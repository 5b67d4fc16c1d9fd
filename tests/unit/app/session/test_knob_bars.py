"""The chart per knob compares values with the other knobs held alike, or says it cannot (issue 29).

Seen before: a dirty_background value tried before the other knobs were tuned read as "256M halves reads"
beside bars measured with every other knob tuned. A bar now is the recommended configuration with only
this knob changed; where that was not measured, it is marked not comparable.
"""

from __future__ import annotations

from app.report.session_data import ObjectiveView, RankedConfig
from app.session.results import knob_bars


def _row(rank: int, config: dict[str, int], mean: float) -> RankedConfig:
    return RankedConfig(rank, config, (rank,), 2, mean, 1.0, mean, 1.0, 0.02, 0.05)


def test_a_bar_with_other_knobs_changed_too_is_marked_not_comparable() -> None:
    ranking = (_row(1, {"ra": 4096, "bg": 16}, 220.0), _row(2, {"ra": 128, "bg": 16}, 150.0),
               _row(3, {"ra": 4096, "bg": 64}, 219.0), _row(4, {"ra": 128, "bg": 256}, 104.0))  # fmt: skip
    view = ObjectiveView("seq_read", {"ra": 4096, "bg": 16}, True, (), (), ranking, 0.4, True, True)
    bars = {b.knob: b for b in knob_bars(view, "seq_read")}
    bg = bars["bg"]
    assert bg.values == (16, 64, 256) and bg.comparable == (True, True, False)  # 256 only with readahead 128
    assert bg.means[bg.values.index(256)] == 104.0 and bg.values[bg.best] == 16
    ra = bars["ra"]
    assert ra.values == (128, 4096) and all(ra.comparable) and ra.means == (150.0, 220.0)  # bg held at 16


def test_an_older_sessions_small_file_figures_stay_in_the_unit_they_were_recorded_in(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Seen: a small-files trial of 1.5 MB/s, recorded before phase figures were kept, shown as 1,548,873 ops/s."""
    from app.report.session_data import load_session_data
    from app.store import Store, TrialState

    with Store(tmp_path / "s.db") as store:
        sid = store.create_session(["srv", "c1"], plan={"knobs": {"nfsd_threads": [8, 16]}, "baseline": {},
                                                      "workloads": ["small_files"]})  # fmt: skip
        for i, (threads, mean) in enumerate([(8, 1.548873e6), (8, 1.55e6), (16, 1.6e6), (16, 1.61e6)]):
            tid = store.add_trial(sid, {"nfsd_threads": threads}, {"kind": "small_files"}, repetition=i // 2)
            store.finish_trial(tid, TrialState.OK, summary={"mean": mean, "median": mean, "cv": 0.01, "n": 10})
        (view,) = load_session_data(store, sid).objectives
    assert view.unit == "B/s" and "MB/s" in view.figure_text() and "ops/s" not in view.verdict()
