"""The Plan → Run commit asks first: per host what changes (today → values to try), the test
mounts, the async risk when chosen, the time; "Back" is the default, only "Start run" starts."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox, QWizard

from ui.pages.plan import PlanPage
from ui.pages.run import RunPage
from ui.run_confirmation import RunConfirmation
from ui.theme import ERROR_COLOUR

from .wizard_driver import small_plan, to_plan

MOUNT = "nfs-server:/srv/nfs at /mnt/nfs-tuner-<session>-<token>"  # what the engine mounts, where


def _ask(qtbot, plan: PlanPage) -> RunConfirmation:  # type: ignore[no-untyped-def]
    button = plan.wizard().button(QWizard.WizardButton.CommitButton)
    assert button.isEnabled() and button.text() == "Start &run…"
    button.click()
    qtbot.waitUntil(lambda: plan.confirmation is not None and plan.confirmation.isVisible())
    assert isinstance(plan.confirmation, RunConfirmation)
    return plan.confirmation


def test_the_run_starts_only_from_its_confirmation(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = to_plan(qtbot, session, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    plan.checks["rsize"].setChecked(True)
    plan.edits["rsize"].setText("32K, 1M")
    dialog = _ask(qtbot, plan)
    assert window.wizard.currentPage() is plan and not session.running and not session.store.list_sessions()
    # the application layer's preview of the very spec the run would get
    spec = session.plan(plan.choices())
    assert dialog.preview == session.preview(spec)
    rows = dialog.rows()
    assert rows == [
        ("nfs-server (server)",),
        ("nfsd_threads (nfsd threads)", "the server: /proc/fs/nfsd/threads", "8", "8, 64"),
        ("client1 (client)",),
        ("remount: test mount", MOUNT, "", "afresh for every trial"),
        ("its own mount", "/mnt/nfs", "", "left as it is"),
        ("rsize", "the test mount", "1048576", "32768, 1048576"),
        ("client2 (client)",),
        ("remount: test mount", MOUNT, "", "afresh for every trial"),
        ("its own mount", "/mnt/nfs", "", "left as it is"),
        ("rsize", "the test mount", "1048576", "32768, 1048576"),
    ]  # fmt: skip
    est = session.estimate(spec)
    assert dialog.estimate.text().startswith(f"{est.trials} trials, about ") and "(at most " in dialog.estimate.text()
    assert plan.estimate.text().startswith(f"{est.trials} trials")  # the same estimate as the page's
    # the demo's hosts run faster than real ones: every time shown says which clock it is on
    speed = f"{session.speed:g}×"
    assert f"(the demo runs {speed} faster than real hosts): about " in dialog.estimate.text()
    assert f"on real hosts; the demo runs {speed} faster: about " in plan.estimate.text()
    assert "nfsd_threads (nfsd threads): Too few threads" in dialog.risks.text()  # a knob that may starve a service, said
    assert not dialog.async_label.isVisible()
    assert dialog.findChild(type(dialog.estimate), "confirmLoad").text().startswith(  # type: ignore[union-attr]
        "Load: seq_write (sequential write), seq_read (sequential read) on every client")
    assert dialog.back_button.isDefault() and not dialog.start_button.autoDefault()

    QTest.keyClick(dialog, Qt.Key.Key_Return)  # Enter is "Back"
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert window.wizard.currentPage() is plan and not session.running
    dialog = _ask(qtbot, plan)
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert window.wizard.currentPage() is plan and not session.running and not session.store.list_sessions()

    dialog = _ask(qtbot, plan)
    dialog.start_button.click()
    qtbot.waitUntil(lambda: isinstance(window.wizard.currentPage(), RunPage))
    qtbot.waitUntil(lambda: session.running)
    assert window.wizard.state.spec == spec


def test_the_confirmation_repeats_the_async_risk(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = to_plan(qtbot, session, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    plan.async_box.click()
    qtbot.waitUntil(lambda: plan.async_warning is not None and plan.async_warning.isVisible())
    assert plan.async_warning is not None
    plan.async_warning.button(QMessageBox.StandardButton.Yes).click()
    plan.edits["export_sync"].setText("sync, async")
    dialog = _ask(qtbot, plan)
    assert ("export_sync (export sync/async)", "the server: 10.0.0.0/24:/srv/nfs", "sync", "sync, async") in dialog.rows()
    assert dialog.async_label.isVisible()
    text = dialog.async_label.text()
    assert text.startswith("⚠ This run tries async exports on nfs-server") and "may lose data" in text
    assert dialog.async_label.palette().color(QPalette.ColorRole.WindowText) == QColor(ERROR_COLOUR)
    dialog.back_button.click()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert window.wizard.currentPage() is plan and not session.running


def test_client_wide_settings_are_said_to_act_on_the_whole_client(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """rpc_slots and the dirty limits are sysctls every filesystem of the client works under: never "the test mount"."""
    window = to_plan(qtbot, session, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    for knob, values in (("rpc_slots", "16, 65536"), ("dirty_bytes", "16M, 64M"), ("read_ahead_kb", "128, 4096")):
        plan.checks[knob].setChecked(True)
        plan.edits[knob].setText(values)
    dialog = _ask(qtbot, plan)
    where = {row[0]: row[1] for row in dialog.rows() if len(row) > 1}
    assert where["rpc_slots (RPC slots per connection, at most)"].startswith("the whole client: ")
    assert where["dirty_bytes (dirty-page limit)"].startswith("the whole client: /proc/sys/vm/")
    assert where["read_ahead_kb (client readahead)"] == "the test mount"
    risks = dialog.risks.text()
    assert "RPC slots per connection, at most): Host-wide on each client" in risks  # said although "safe"
    assert "dirty-page limit): Host-wide on each client" in risks
    where = {plan.table.item(r, 1).text(): plan.table.item(r, 2).text() for r in range(plan.table.rowCount())
             if plan.table.item(r, 1) is not None and plan.table.item(r, 2) is not None}  # not the reasons' rows
    assert where["rpc_slots (RPC slots per connection, at most)"] == where["dirty_bytes (dirty-page limit)"] == "whole client"
    assert where["read_ahead_kb (client readahead)"] == where["rsize"] == "test mount"
    dialog.reject()


def test_the_hosts_are_checked_before_the_confirmation_and_a_problem_stops_it(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The pre-flight check on the spec the run would get: one line per problem, no confirmation, nothing run."""
    window = to_plan(qtbot, session, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    session.hosts.export_free_bytes = 10 << 20  # the export is all but full
    session.hosts.unwritable.add("client2")
    plan.wizard().button(QWizard.WizardButton.CommitButton).click()
    qtbot.waitUntil(lambda: plan.checking is None and plan.error_label.text().startswith("Nothing was changed."))
    lines = plan.error_label.text().splitlines()
    assert lines[1].startswith("• nfs-server: the export /srv/nfs has 10 MiB free and this plan needs ")
    assert lines[2].startswith("• client2: root may not write the export")
    assert plan.confirmation is None and not session.running and not session.store.list_sessions()
    session.hosts.export_free_bytes = 800 << 30
    session.hosts.unwritable.clear()
    dialog = _ask(qtbot, plan)  # nothing in the way any more: the confirmation, as before
    assert plan.error_label.text() == ""
    dialog.reject()
