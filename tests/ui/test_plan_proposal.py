"""The Plan page opens on the diagnosis's plan: what limits the hosts, each knob ticked or not with its
values and its reason under it, the workloads of what the server is for, fitted to the time budget;
Start is disabled while the plan cannot fit. Real widgets over the demo's simulated hosts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWizard

from app.session import TuningSession
from app.simulated import SimulatedHosts
from app.store import Store
from ui.pages.plan import BY_HAND, LEFT_OUT, PlanPage, knob_row

from .wizard_driver import go_next, to_plan


def _page(qtbot, session, tmp_path) -> tuple[Any, PlanPage]:  # type: ignore[no-untyped-def]
    window = to_plan(qtbot, session, tmp_path)
    page = window.wizard.currentPage()
    assert isinstance(page, PlanPage)
    return window, page


def _reason(page: PlanPage, knob: str) -> str:
    index = next(i for i, k in enumerate(page.knobs) if k.name == knob)
    item = page.table.item(knob_row(index) + 1, 0)
    assert item is not None
    return item.text()


def _shown_first(page: PlanPage, count: int) -> list[str]:
    """The knobs in the first ``count`` places the table shows."""
    header = page.table.verticalHeader()
    rows = [header.logicalIndex(v) for v in range(0, 2 * count, 2)]
    return [page.knobs[r // 2].name for r in rows]


def _start(window: Any) -> bool:
    return bool(window.wizard.button(QWizard.WizardButton.CommitButton).isEnabled())


def test_the_page_opens_on_the_proposal_with_each_reason_under_its_knob(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window, page = _page(qtbot, session, tmp_path)
    ticked = [name for name, check in page.checks.items() if check.isChecked()]
    assert sorted(ticked) == ["read_ahead_kb", "stripe_cache_size"]
    assert _shown_first(page, 2) == ["stripe_cache_size", "read_ahead_kb"]  # the proposal's order, on top
    assert page.edits["stripe_cache_size"].text() == "256, 1024, 4096, 8192"
    assert _reason(page, "stripe_cache_size") == "RAID-6 and large writes in the plan: stripe_cache_size"
    assert _reason(page, "nfsd_threads") == "threads waited 0.4 % of the time: nfsd_threads unlikely to matter, not ticked"
    assert page.diagnosis_label.text().startswith("What limits the hosts today: the export's flush cost.\nseq_read at ")
    assert "round trip: 0.210 ms, a LAN's" in page.diagnosis_label.toolTip()
    assert page.use_box.currentText() == "large files" and page.budget_edit.text() == "30m"
    assert page.choices().budget_s == 1800 and list(page.choices().knobs) == ["stripe_cache_size", "read_ahead_kb"]
    assert page.estimate.text().startswith("47 trials, about 27 min 36 s (about 7 min 06 s if the screening finds "
                                           "nothing worth a closer look; at most ")  # the screening alone: 12 trials
    assert ") on real hosts; the demo runs " in page.estimate.text()
    assert page.estimate.text().endswith("; to fit 30 min: 30 s measured per trial")
    assert page.isComplete() and _start(window)
    page.checks["stripe_cache_size"].setChecked(False)  # the admin's say; the reason stays
    page.checks["nfsd_threads"].setChecked(True)
    assert _reason(page, "stripe_cache_size") == "RAID-6 and large writes in the plan: stripe_cache_size"
    assert list(page.choices().knobs) == ["read_ahead_kb", "nfsd_threads"]  # the proposal's first, then the admin's


def test_what_the_server_is_for_sets_the_workloads_and_proposes_again(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _, page = _page(qtbot, session, tmp_path)
    small = page.use_box.findData("small_files")
    page.use_box.setCurrentIndex(small)
    page.use_box.activated.emit(small)
    assert page.choices().workloads == ("seq_read", "small_files")
    assert page.checks["export_wdelay"].isChecked() and "no_wdelay commits each at once" in _reason(page, "export_wdelay")
    assert not page.checks["export_sync"].isChecked() and "opt-in" in _reason(page, "export_sync")
    seq_read = next(i for i in range(page.workload_list.count()) if page.workload_list.item(i).data(Qt.ItemDataRole.UserRole) == "seq_read")
    page.workload_list.item(seq_read).setCheckState(page.workload_list.item(seq_read).checkState().Unchecked)
    assert page.use_box.currentText() == BY_HAND  # workloads one by one: no use's
    assert _reason(page, "read_ahead_kb").startswith("no sequential reads in the plan")  # the reasons follow
    assert page.checks["read_ahead_kb"].isChecked()  # the ticks stay the admin's


def test_the_budget_fits_the_plan_or_start_is_disabled_with_the_reason(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window, page = _page(qtbot, session, tmp_path)
    page.budget_edit.setText("15m")
    assert page.isComplete() and "left out read_ahead_kb (lowest priority)" in page.estimate.text()
    assert _reason(page, "read_ahead_kb").startswith(LEFT_OUT)
    page.budget_edit.setText("5m")
    assert not page.isComplete() and not _start(window)
    assert page.error_label.text().startswith("the plan does not fit 5 min even with 10 s measured per trial")
    page.budget_edit.setText("soon")
    assert not page.isComplete() and page.error_label.text().startswith("time budget: give a time in hours")
    page.budget_edit.setText("2h")
    assert page.isComplete() and _start(window) and "to fit" not in page.estimate.text()
    page.budget_edit.clear()  # no limit: a plan far beyond any run still cannot start
    for name, values in {"read_ahead_kb": "0, 128, 1024, 4096, 16384, 65536", "nfsd_threads": "1, 2, 4, 8, 16, 32, 64, 128",
                         "nconnect": "1, 2, 4, 8, 16", "rpc_slots": "2, 16, 128, 1024, 65536",
                         "stripe_cache_size": "256, 512, 1024, 2048, 4096, 8192, 16384, 32768"}.items():  # fmt: skip
        page.checks[name].setChecked(True)
        page.edits[name].setText(values)
    page.strategy_box.setCurrentIndex(page.strategy_box.findData("grid"))
    assert not page.isComplete() and not _start(window) and "far beyond any run" in page.error_label.text()


def test_the_run_gets_the_fitted_plan(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window, page = _page(qtbot, session, tmp_path)
    go_next(qtbot, window.wizard)
    spec = window.wizard.state.spec
    assert spec is not None and list(spec.plan.knobs) == ["stripe_cache_size", "read_ahead_kb"]
    assert spec.plan.timing.max_measure_s == 30 and spec.plan.max_runs == 6  # to fit the 30 minutes


class NoArray(SimulatedHosts):
    """The demo's hosts with a plain disk under the export: no md array, no stripe cache."""

    async def discover(self, host: str) -> Any:
        facts = await super().discover(host)
        if host != "nfs-server":
            return facts
        return replace(facts, md_arrays=(), export_filesystems=tuple(replace(f, md_array="", source="/dev/sdb1")
                                                                    for f in facts.export_filesystems))  # fmt: skip


def test_a_knob_whose_target_the_server_lacks_is_not_offered(qtbot, loop, tmp_path) -> None:  # type: ignore[no-untyped-def]
    session = TuningSession(Store(tmp_path / "n.db"), NoArray(speed=200.0), log_path=tmp_path / "log")
    try:
        _, page = _page(qtbot, session, tmp_path)
        check = page.checks["stripe_cache_size"]
        assert not check.isEnabled() and not check.isChecked() and not page.edits["stripe_cache_size"].isEnabled()
        assert _reason(page, "stripe_cache_size") == "no md array under the export: stripe_cache_size not offered"
        assert "stripe_cache_size" not in page.choices().knobs
    finally:
        session.store.close()


def test_the_async_opt_in_ticks_the_export_and_its_reason_says_so(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _, page = _page(qtbot, session, tmp_path)
    assert "not ticked without its opt-in" in _reason(page, "export_sync")
    page.async_box.click()
    qtbot.waitUntil(lambda: page.async_warning is not None and page.async_warning.isVisible())
    assert page.async_warning is not None
    page.async_warning.button(QMessageBox.StandardButton.Yes).click()
    assert page.checks["export_sync"].isChecked()
    assert _reason(page, "export_sync") == ("one commit costs 8.50 ms on the export: async acknowledges before the "
                                            "disk (you opted in; it may lose writes on a crash)")  # fmt: skip
