"""Time to open a session of 1 000 000 samples in the review window and draw its first views.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m benchmarks.review_open [--samples N] [--db PATH]

Goal (issue 8): ≤ 1 s. Figures printed, never asserted. "Open" is from creating the
window on the database to the session's Results tab painted; "samples" is from
switching to the Samples tab to its plot of every sample painted. Making a session of
10 million samples takes minutes: ``--db`` keeps it and later runs reuse it. The store's
own read time is printed too (the Samples tab cannot be faster than reading the blocks).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fabricate_session, app, ui

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget


class Painted(QObject):
    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.seen = False
        widget.installEventFilter(self)

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self.seen = True
        return False


def until_painted(app: QApplication, watch: Painted, timeout: float = 30.0) -> None:
    deadline = time.perf_counter() + timeout
    while not watch.seen:
        app.processEvents()
        if time.perf_counter() > deadline:
            raise TimeoutError("the view was never painted")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--db", type=Path, help="keep the session database here (reused if it holds one of that size)")
    args = parser.parse_args(argv)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)

    from app.store import Store
    from app.store.sample_blocks import SAMPLE_DTYPE
    from tests.fabricate_session import Recipe, fabricate_session
    from ui.review.timeline import session_timeline
    from ui.review.window import ReviewWindow
    from ui.theme import apply_app_style

    apply_app_style(app)
    recipe = Recipe(workloads=("seq_read", "seq_write"), repetitions=3, broken_trial=False)
    streams = 2 * len(recipe.clients) * 6 * recipe.repetitions  # workloads × clients × configs × repetitions
    recipe.samples_per_trial = -(-args.samples // streams)
    with tempfile.TemporaryDirectory(prefix="nfs-tuner-bench-") as tmp:
        db = args.db or Path(tmp) / "sessions.db"
        sid, n = _kept_session(db, recipe.samples_per_trial * streams) if args.db else (0, 0)
        if not n:
            db.unlink(missing_ok=True)
            t = time.perf_counter()
            with Store(db) as store:
                sid = fabricate_session(store, recipe)
                n = store.sample_count(sid)
            print(f"session: made in {time.perf_counter() - t:.1f} s")
        print(f"session: {n:,} samples in {streams // len(recipe.clients)} trials "
              f"({n * SAMPLE_DTYPE.itemsize / 1e6:.0f} MB of sample blocks)")
        with Store(db, readonly=True) as store:
            t = time.perf_counter()
            samples = store.load_session_samples(sid)
            t_load = time.perf_counter() - t
            t = time.perf_counter()
            session_timeline(samples)
            t_layout = time.perf_counter() - t
            del samples
            t = time.perf_counter()
            for trial in store.trials(sid):
                store.load_samples(trial.id)
            t_trials = time.perf_counter() - t
        print(f"  store: load_session_samples {t_load * 1000:.0f} ms (then timeline layout {t_layout * 1000:.0f} ms); "
              f"load_samples of every trial {t_trials * 1000:.0f} ms")
        painted = []
        for run in range(args.runs):
            t0 = time.perf_counter()
            window = ReviewWindow(Store(db), source=str(db))
            window.resize(1280, 800)
            window.show()
            view = window.open_session(sid)
            assert view is not None
            until_painted(app, Painted(view.results.table.viewport()))
            t_open = time.perf_counter() - t0
            t1 = time.perf_counter()
            watch = Painted(view.samples.plot.viewport())
            view.tabs.setCurrentWidget(view.samples)
            until_painted(app, watch)
            t_samples = time.perf_counter() - t1
            painted.append(t_samples)
            print(f"run {run + 1}: open + results painted {t_open * 1000:.0f} ms; samples tab "
                  f"({n:,} samples) painted {t_samples * 1000:.0f} ms; total {(t_open + t_samples) * 1000:.0f} ms "
                  f"(goal ≤ 1000 ms)")
            window.close()
            window.deleteLater()
            app.processEvents()
        print(f"samples tab painted, median of {len(painted)}: {sorted(painted)[len(painted) // 2] * 1000:.0f} ms")
    return 0


def _kept_session(db: Path, samples: int) -> tuple[int, int]:
    """The session an earlier run left in ``db``, if it has that many samples: (id, count), else (0, 0)."""
    from app.store import Store

    if not db.exists():
        return 0, 0
    with Store(db, readonly=True) as store:
        for session in store.list_sessions():
            if (n := store.sample_count(session.id)) == samples:
                return session.id, n
    return 0, 0


if __name__ == "__main__":
    sys.exit(main())
