"""The Baseline page loads the hosts only on "Measure baseline", says its steps and time
first, counts the steps while it runs, and shows a failure as a failure.

Seen: the page started measuring as soon as it opened (its hint said nothing was
changed), showed only a busy bar, and a failure ended at "100 %" with the error in a
small plain label.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWizard

from app.runner import RunError
from app.session import BaselineStepStarted, Role, TuningSession
from app.simulated import SimulatedHosts
from ui.main_window import MainWindow
from ui.pages.baseline import BaselinePage
from ui.pages.hosts import HostsPage
from ui.theme import ERROR_COLOUR

from .wizard_driver import add_host, go_next


def _to_baseline(qtbot, session: TuningSession, tmp_path: Path) -> tuple[MainWindow, BaselinePage]:  # type: ignore[no-untyped-def]
    window = MainWindow(db_path=tmp_path / "s.db", session=session)
    qtbot.addWidget(window)
    window.show()
    hosts = window.wizard.currentPage()
    assert isinstance(hosts, HostsPage)
    for name, role in (("nfs-server", Role.SERVER), ("client1", Role.CLIENT), ("client2", Role.CLIENT)):
        add_host(qtbot, hosts, name, role)
    go_next(qtbot, window.wizard)
    page = window.wizard.currentPage()
    assert isinstance(page, BaselinePage)
    return window, page


def test_nothing_loads_the_hosts_before_the_button(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window, page = _to_baseline(qtbot, session, tmp_path)
    qtbot.wait(300)  # long enough for a simulated baseline to have finished, had it started
    assert page.task is None and window.bridge.live.version == 0  # no probe ran, no sample came
    assert page.ceilings.rowCount() == 0 and not page.isComplete()
    assert not window.wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    assert page.measure_button.text() == "&Measure baseline" and page.measure_button.isEnabled()
    hint = page.findChild(type(page.status), "pageHint")
    assert hint is not None and "puts load on the hosts" in hint.text() and "Measure baseline" in hint.text()
    # what it would run, where, and for how long: 2 networks, the disk, 2 workloads of today's configuration
    steps = [page.step_list.item(i) for i in range(page.step_list.count())]
    assert [s.text().split(" (about")[0] for s in steps] == [
        "1. network client1 → nfs-server", "2. network client2 → nfs-server",
        "3. nfs-server disk, sequential write and read", "4. today's configuration, seq_write (sequential write)",
        "5. today's configuration, seq_read (sequential read)"]  # fmt: skip
    assert steps[0].toolTip().startswith("On client1, nfs-server: TCP traffic at full speed")
    assert "256 MiB test file in /srv/nfs" in steps[2].toolTip()
    assert page.estimate.text().startswith("5 steps of load on the hosts, about ")
    assert f"on real hosts; the demo runs {session.speed:g}× faster: about " in page.estimate.text()  # both clocks
    assert all(s.text().endswith(" on real hosts)") for s in steps)
    assert page.progress.format() == "not started" and page.progress.value() == 0
    page.workload_list.item(0).setCheckState(page.workload_list.item(0).checkState().Unchecked)
    assert page.step_list.count() == 4 and page.estimate.text().startswith("4 steps")


def test_measuring_counts_its_steps_and_names_the_hosts(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window, page = _to_baseline(qtbot, session, tmp_path)
    seen: list[tuple[str, str, str]] = []
    window.bridge.baselineStep.connect(lambda ev: seen.append((page.progress.format(), page.status.text(),
                                                               page.estimate.text())))  # fmt: skip
    page.measure_button.click()
    assert page.task is not None and not page.measure_button.isEnabled() and page.cancel_button.isEnabled()
    qtbot.waitUntil(page.isComplete, timeout=10_000)
    assert [f for f, _, _ in seen] == [f"step {i} of 5" for i in range(1, 6)]
    assert seen[0][1].startswith("Step 1 of 5: network client1 → nfs-server, on client1, nfs-server. TCP traffic")
    assert seen[2][1].startswith("Step 3 of 5: nfs-server disk, sequential write and read, on nfs-server. Writes")
    assert "Drops the page caches on every host, then runs seq_write (sequential write)" in seen[3][1]
    assert all(e.startswith("About ") and e.endswith(f" left (the demo runs {session.speed:g}× faster than real hosts).")
               for _, _, e in seen)  # fmt: skip
    assert page.progress.value() == page.progress.maximum() == 5 and page.progress.format() == "all 5 steps done"
    assert page.ceilings.rowCount() == 4 and not page.failure.isVisible()
    assert page.measure_button.text() == "&Measure again"
    assert window.wizard.button(QWizard.WizardButton.NextButton).isEnabled()


def test_a_failure_shows_as_failure_and_can_be_retried(qtbot, session, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    window, page = _to_baseline(qtbot, session, tmp_path)
    hosts = session.hosts
    assert isinstance(hosts, SimulatedHosts)

    async def full_disk(server: str, export: str, **_kw: object) -> None:
        await asyncio.sleep(0.01)
        raise RunError(server, f"no space left on device writing {export}/nfs-tuner-disk-probe", errno=28)

    monkeypatch.setattr(hosts, "disk_ceiling", full_disk)
    page.measure_button.click()
    qtbot.waitUntil(lambda: page.task is None, timeout=10_000)
    assert page.failure.isVisible() and not page.isComplete()
    assert page.failure.headline.text() == ("The baseline failed at step 3 of 5 "
                                            "(nfs-server disk, sequential write and read).")  # fmt: skip
    assert page.failure.error.text() == "nfs-server: no space left on device writing /srv/nfs/nfs-tuner-disk-probe"
    assert page.failure.error.font().pointSizeF() > page.status.font().pointSizeF()  # prominent, not small print
    assert page.failure.headline.palette().color(QPalette.ColorRole.WindowText) == QColor(ERROR_COLOUR)
    assert page.failure.headline.font().bold()
    # the bar stays where it failed, in the error colour: never "100 %"
    assert page.progress.value() == 2 < page.progress.maximum() and page.progress.format() == "failed at step 3 of 5"
    assert page.progress.palette().color(QPalette.ColorRole.Highlight) == QColor(ERROR_COLOUR)
    assert not page.step_list.item(2).icon().isNull() and page.step_list.item(3).icon().isNull()
    assert not window.wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    assert page.failure.retry_button.isEnabled() and page.failure.retry_button.text() == "Measure &again"

    monkeypatch.undo()  # the admin freed some space
    page.failure.retry_button.click()
    assert not page.failure.isVisible()
    assert page.progress.palette().color(QPalette.ColorRole.Highlight) != QColor(ERROR_COLOUR)
    qtbot.waitUntil(page.isComplete, timeout=10_000)
    assert page.progress.value() == page.progress.maximum() and page.ceilings.rowCount() == 4


def test_stop_leaves_the_bar_where_it_stopped(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window, page = _to_baseline(qtbot, session, tmp_path)
    hosts = session.hosts
    assert isinstance(hosts, SimulatedHosts)
    hosts.speed = 2.0  # a 5 s TCP probe takes 2.5 s: time to stop it
    steps: list[BaselineStepStarted] = []
    window.bridge.baselineStep.connect(steps.append)
    page.measure_button.click()
    qtbot.waitUntil(lambda: bool(steps))
    page.cancel_button.click()
    qtbot.waitUntil(lambda: page.task is None, timeout=10_000)
    assert page.progress.format() == "stopped at step 1 of 5" and page.progress.value() == 0
    assert not page.isComplete() and not page.failure.isVisible()
    assert "Stopped" in page.status.text() and page.measure_button.isEnabled()


def test_a_baseline_of_other_hosts_is_measured_again(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window, page = _to_baseline(qtbot, session, tmp_path)
    page.measure_button.click()
    qtbot.waitUntil(page.isComplete, timeout=10_000)
    window.wizard.back()
    hosts = window.wizard.currentPage()
    assert isinstance(hosts, HostsPage)
    go_next(qtbot, window.wizard)  # the same hosts: the measurement stands
    assert page.isComplete() and page.ceilings.rowCount() == 4
    window.wizard.back()
    hosts.remove_host("client2")
    go_next(qtbot, window.wizard)
    assert not page.isComplete() and page.ceilings.rowCount() == 0 and page.task is None  # asks again, loads nothing
    assert page.step_list.count() == 4 and page.progress.format() == "not started"
    assert page.measure_button.text() == "&Measure baseline"
