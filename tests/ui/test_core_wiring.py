"""Which core the window gets, what the status bar says, the review window, crash leftovers,
and the real core's translation of the plan (no hosts needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel

from ui.core_api import Leftover, Plan, Strategy
from ui.core_factory import DEMO_ENV, make_core
from ui.fake_core import FakeCore
from ui.leftovers_dialog import LeftoversDialog
from ui.main_window import MainWindow
from ui.real_core import RealCore, size_text
from ui.review.window import ReviewWindow


def test_the_real_core_by_default_the_demo_only_when_asked(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(DEMO_ENV, raising=False)
    core, demo = make_core(tmp_path / "s.db", tmp_path / "no-such-config")
    assert isinstance(core, RealCore) and not demo
    monkeypatch.setenv(DEMO_ENV, "1")
    core, demo = make_core(tmp_path / "s.db")
    assert isinstance(core, FakeCore) and demo


@pytest.mark.parametrize("demo", [True, False])
def test_the_status_bar_says_which_core(qtbot, monkeypatch, tmp_path: Path, demo: bool) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(DEMO_ENV, "1" if demo else "0")
    window = MainWindow(db_path=tmp_path / "s.db", ssh_config=tmp_path / "no-such-config")
    qtbot.addWidget(window)
    label = window.findChild(QLabel, "demoLabel" if demo else "coreLabel")
    assert label is not None
    assert ("Demo core" in label.text()) is demo and ("Real hosts" in label.text()) is not demo


def test_the_review_window_opens_on_the_same_database(qtbot, core: FakeCore, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", core=core)
    qtbot.addWidget(window)
    window.review_action.trigger()
    assert isinstance(window.review_window, ReviewWindow) and window.review_window.isVisible()
    qtbot.addWidget(window.review_window)


class _CrashedBefore(FakeCore):
    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.reverted: list[int] = []
        self.dismissed: list[int] = []

    async def leftovers(self) -> Sequence[Leftover]:
        return [Leftover(e, "nfs-server", "nfsd_threads (/proc/fs/nfsd/threads)", "8", "64", "still changed?")
                for e in (3, 4) if e not in self.reverted + self.dismissed]  # fmt: skip

    async def revert_leftover(self, entry_id: int) -> None:
        self.reverted.append(entry_id)

    def dismiss_leftover(self, entry_id: int) -> None:
        self.dismissed.append(entry_id)


@pytest.mark.parametrize("answer", ["revert", "dismiss"])
def test_crash_leftovers_are_offered_on_start(qtbot, loop, tmp_path: Path, answer: str) -> None:  # type: ignore[no-untyped-def]
    core = _CrashedBefore(speed=200.0)
    window = MainWindow(db_path=tmp_path / "s.db", core=core)
    qtbot.addWidget(window)
    window.show()
    window.check_leftovers()
    qtbot.waitUntil(lambda: window.leftovers_dialog is not None and window.leftovers_dialog.isVisible())
    dialog = window.leftovers_dialog
    assert isinstance(dialog, LeftoversDialog) and dialog.table.rowCount() == 2
    assert dialog.table.item(0, 3).text() == "still changed?"
    (dialog.revert_button if answer == "revert" else dialog.dismiss_button).click()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert (core.reverted if answer == "revert" else core.dismissed) == [3, 4]


def test_no_leftovers_no_dialog(qtbot, loop, core: FakeCore, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", core=core)
    qtbot.addWidget(window)
    window.check_leftovers()
    qtbot.wait(50)
    assert window.leftovers_dialog is None


def test_the_real_core_translates_the_plan(tmp_path: Path) -> None:
    core = RealCore(tmp_path / "s.db", ssh_config=tmp_path / "no-such-config")
    knobs = {k.name: k for k in core.knobs()}
    assert knobs["rsize"].choices[0] == "4K" and knobs["rsize"].choices[-1] == "1M"
    assert knobs["rsize"].check("32K") is None and knobs["rsize"].check("3M") is not None
    assert knobs["nfsd_threads"].check("0") is not None  # 0 would stop the service
    assert knobs["export_sync"].needs_opt_in
    assert knobs["nfsd_threads"].current == "unknown"  # no host connected yet
    plan = core.core_plan(Plan({"rsize": ("32K", "1M"), "nconnect": ("1", "4")}, ("seq_read",), Strategy.GRID, 2))
    assert plan.knobs == {"rsize": (32768, 1048576), "nconnect": (1, 4)}
    assert (plan.strategy, plan.min_runs, plan.max_runs) == ("grid", 2, 2)
    trials, seconds = core.estimate_duration(Plan({"rsize": ("32K", "1M")}, ("seq_read",), Strategy.GRID, 1))
    assert trials == 2 and seconds > 0
    assert [w.name for w in core.workloads()][:2] == ["seq_write", "seq_read"]
    assert (size_text(1048576), size_text(32768), size_text(1000)) == ("1M", "32K", "1000")
    core.store.close()
