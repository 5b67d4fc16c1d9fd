"""The real wizard on the real core against the lab: hosts → baseline → plan → run → results.

Host keys go through the trust dialog: the test's SSH config is the lab's without its
UserKnownHostsFile, and the app's known_hosts starts empty. The plan is tiny (rsize
32K vs 1M, seq_read, one 2 s trial each) so the whole flow stays within a few minutes.
"""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWizard

from app.hosts import HostPool, SshSettings
from app.session import PlanChoices, Role, TuningSession
from app.store import JournalState, SessionState, Store, TrialRecord, TrialState
from app.sweep.ssh_hosts import SshHosts
from experiments.workloads import MIB
from tests.conftest import LabHandle
from ui.main_window import MainWindow
from ui.pages.baseline import BaselinePage
from ui.pages.hosts import HostsPage, HostState
from ui.pages.plan import PlanPage, knob_row
from ui.pages.results import ResultsPage
from ui.pages.run import RunPage
from ui.trust_dialog import TrustDialog

from .wizard_driver import confirm_run

pytestmark = pytest.mark.lab
SHORT = PlanChoices(duration_s=2.0, file_size=16 * MIB)  # 2 s trials (0.5 s warm-up), 16 MiB per client


def _config_without_known_hosts(lab: LabHandle, where: Path) -> Path:
    """The lab's SSH config, minus its own known_hosts: every key is new to the app."""
    text = lab.ssh_config.read_text(encoding="utf-8")
    where.write_text("".join(line for line in text.splitlines(keepends=True)
                             if "UserKnownHostsFile" not in line), encoding="utf-8")  # fmt: skip
    return where


def _add_trusting(qtbot, page: HostsPage, name: str, role: Role) -> str:  # type: ignore[no-untyped-def]
    """Add a host, answer the trust dialog with Trust; returns the fingerprint it showed."""
    page.add_host(name, role)
    qtbot.waitUntil(lambda: page.trust_dialog is not None and page.trust_dialog.isVisible(), timeout=30_000)
    dialog = page.trust_dialog
    assert isinstance(dialog, TrustDialog) and dialog.host == name
    fingerprint = dialog.fingerprint.text()
    dialog.trust_button.click()
    qtbot.waitUntil(lambda: page.rows[name].state not in (HostState.CONNECTING, HostState.NEW), timeout=60_000)
    assert page.rows[name].state is HostState.OK, page.rows[name].error
    return fingerprint


def _next(qtbot, wizard) -> None:  # type: ignore[no-untyped-def]
    page = wizard.currentPage()
    which = QWizard.WizardButton.CommitButton if page.isCommitPage() else QWizard.WizardButton.NextButton
    qtbot.waitUntil(wizard.button(which).isEnabled, timeout=10_000)
    wizard.button(which).click()
    if isinstance(page, PlanPage):  # the run starts only from its confirmation
        confirm_run(qtbot, page)
    qtbot.waitUntil(lambda: wizard.currentPage() is not page)


def _cells(table, column: int) -> list[str]:  # type: ignore[no-untyped-def]
    return [table.item(r, column).text() for r in range(table.rowCount()) if table.item(r, column)]


def test_the_wizard_tunes_the_lab(qtbot, loop, lab: LabHandle, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "sessions.db"
    known_hosts = tmp_path / "known_hosts"
    settings = SshSettings(config_file=_config_without_known_hosts(lab, tmp_path / "ssh_config"),
                           app_known_hosts=known_hosts)  # fmt: skip
    session = TuningSession(Store(db), SshHosts(HostPool(settings)), log_path=tmp_path / "nfs-tuner.log")
    session.plan_defaults = SHORT
    window = MainWindow(db_path=db, session=session)
    qtbot.addWidget(window)
    window.show()
    wizard = window.wizard
    label = window.findChild(QLabel, "coreLabel")
    assert label is not None and "Real hosts" in label.text()

    # 1. hosts: both keys trusted through the dialog, the facts on show
    hosts = wizard.currentPage()
    assert isinstance(hosts, HostsPage)
    assert {"lab-server", "lab-client1"} <= {hosts.ssh_list.item(i).text() for i in range(hosts.ssh_list.count())}
    fp_server = _add_trusting(qtbot, hosts, "lab-server", Role.SERVER)
    assert fp_server.startswith("SHA256:")
    assert "lab-server" in known_hosts.read_text() or "127.0.0.1" in known_hosts.read_text()
    qtbot.waitUntil(lambda: hosts.offered_list.count() > 0, timeout=10_000)
    offered = [hosts.offered_list.item(i).text() for i in range(hosts.offered_list.count())]
    # by SSH alias when the NFSv4 client name matches one, else by address (a client that just remounted)
    assert "lab-client1" in offered or "10.213.7.11" in offered, offered
    _add_trusting(qtbot, hosts, "lab-client1", Role.CLIENT)
    server, client = hosts.rows["lab-server"].facts, hosts.rows["lab-client1"].facts
    assert server is not None and client is not None
    assert server.kernel and client.kernel
    assert any(a.name == "md0" and a.level.startswith("raid") for a in server.md_arrays)
    assert any(e.path == "/srv/nfs" for e in server.exports)
    assert any(m.source == "lab-server:/srv/nfs" for m in client.nfs_mounts)
    assert server.privilege.startswith("root")
    row = _cells(hosts.table, 0).index("lab-server")
    assert hosts.table.item(row, 3).text() == server.kernel
    assert "md0" in hosts.table.item(row, 5).text()
    hosts.table.selectRow(row)
    assert "/srv/nfs" in hosts.facts_view.toPlainText()
    assert hosts.summary.text() == "Ready: 1 server, 1 client(s)."

    # 2. baseline: sequential read only, ceilings and today's figure
    baseline = wizard.page_of(BaselinePage)
    assert isinstance(baseline, BaselinePage)
    for i in range(baseline.workload_list.count()):
        item = baseline.workload_list.item(i)
        item.setCheckState(item.checkState().Checked if item.data(Qt.ItemDataRole.UserRole) == "seq_read" else item.checkState().Unchecked)
    _next(qtbot, wizard)
    assert wizard.currentPage() is baseline
    baseline.measure_button.click()  # nothing loads the hosts before
    qtbot.waitUntil(baseline.isComplete, timeout=90_000)
    ceilings = _cells(baseline.ceilings, 0)
    assert any(c.startswith("network lab-client1 → lab-server") for c in ceilings), ceilings
    assert any("disk, sequential read" in c for c in ceilings)
    assert _cells(baseline.current, 0) == ["seq_read (sequential read)"]
    assert all(t.endswith("MB/s") for t in _cells(baseline.ceilings, 1) + _cells(baseline.current, 1))

    # 3. plan: rsize 32K vs 1M, grid, once each
    _next(qtbot, wizard)
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    rsize = next(i for i, k in enumerate(plan.knobs) if k.name == "rsize")
    assert plan.table.item(knob_row(rsize), 3).text() == "1048576"  # today's, from the client's mount
    for name, check in plan.checks.items():
        check.setChecked(name == "rsize")
    plan.edits["rsize"].setText("32K, 3M")
    assert "rsize" in plan.error_label.text()  # not a size the client takes
    plan.edits["rsize"].setText("32K, 1M")
    plan.strategy_box.setCurrentIndex(plan.strategy_box.findData("grid"))
    plan.reps.setValue(1)
    assert plan.choices().workloads == ("seq_read",)
    assert plan.isComplete(), plan.error_label.text()
    # 2 configurations once each, then at most the put-back checks' and the confirmation's runs
    assert re.match(r"\d+ trials, about ", plan.estimate.text()), plan.estimate.text()

    # 4. run: live samples in the plot, the strip, the journal put back
    _next(qtbot, wizard)
    run = wizard.currentPage()
    assert isinstance(run, RunPage)
    qtbot.waitUntil(lambda: session.running, timeout=5_000)
    qtbot.waitUntil(lambda: "lab-client1" in run.plots.trial.client_curves, timeout=90_000)
    assert window.bridge.live.version > 0
    qtbot.waitUntil(lambda: "lab-server" in window.bridge.live.hosts, timeout=30_000)  # its disk and NIC
    qtbot.waitUntil(run.isComplete, timeout=400_000)
    finished = wizard.state.finished
    assert finished is not None and finished.state == SessionState.COMPLETE.value, run.trial_label.text()
    ran = len(store_trials(db, session.session_id))
    assert ran >= 2 and run.strip.count() == ran
    assert run.progress.value() == run.progress.maximum() == ran
    assert "put back" in run.trial_label.text()
    assert run.journal.rowCount() >= 1
    assert set(_cells(run.journal, 3)) <= {"reverted", "reverted_by_host"}
    assert not session.running

    # 5. results: ranking, recommendation, snippets
    _next(qtbot, wizard)
    results = wizard.currentPage()
    assert isinstance(results, ResultsPage)
    # Both configurations are ranked unless the shared lab made one look faster than the TCP
    # ceiling measured on the Baseline page: the recommendation then leaves it out, and says why.
    data = results.data
    assert data is not None
    excluded = [e for e in data.excluded if e.get("config")]
    ranked = data.objective("seq_read")
    rows = len(ranked.ranking) if ranked is not None else 0
    print("\nranking:", _cells(results.ranking, 1), _cells(results.ranking, 2), "excluded:", excluded)
    assert rows + len(excluded) == 2 and results.ranking.rowCount() == rows
    assert set(_cells(results.ranking, 1)) <= {"rsize=32768", "rsize=1048576"}
    assert all(str(e["reason"]) in html.unescape(results.safety.text()) for e in excluded)
    if rows:
        assert results.objective.currentText() == "seq_read"
        assert ranked is not None and ranked.stored and ranked.verdict() in html.unescape(results.recommendation.text())
        fstab = [v for v in results.snippet_views if v.snippet.key == "fstab"]
        plan = results.data.plan
        if plan is not None and "rsize" in plan.changes:  # snippets set only the changes: kept rsize, no fstab line
            assert fstab and "/srv/nfs" in fstab[0].snippet.text, fstab
        else:
            assert not fstab, fstab[0].snippet.text
    else:  # seen when the lab is loaded: iperf3 reads low, NFS does not
        assert "No configuration could be ranked" in results.recommendation.text()
        assert all("beyond the network ceiling" in str(e["reason"]) for e in excluded), excluded

    # the session is in the store, complete, reverted, with its recommendation
    sid = session.session_id
    assert sid is not None
    with Store(db, readonly=True) as store:
        assert store.get_session(sid).state == SessionState.COMPLETE
        trials = store.trials(sid)
        assert sorted({t.config["rsize"] for t in trials}) == [32768, 1048576]
        assert all(t.state == TrialState.OK for t in trials), [t.reason for t in trials]
        assert all(e.state in (JournalState.REVERTED, JournalState.REVERTED_BY_HOST)
                   for e in store.journal(sid))  # fmt: skip
        ceilings = [(f.host, f.role) for f in store.host_facts(sid) if f.role == "ceiling"]
        assert ceilings.count(("lab-client1", "ceiling")) == 1  # the Baseline page's, not measured again
        saved = [r.objective for r in store.recommendations(sid)]
        assert saved == (["seq_read"] if rows else [])
    window.close()
    closing = asyncio.ensure_future(session.close())
    qtbot.waitUntil(closing.done, timeout=10_000)


def store_trials(db: Path, sid: int | None) -> list[TrialRecord]:
    assert sid is not None
    with Store(db, readonly=True) as store:
        return store.trials(sid)
