from __future__ import annotations

from app.session import Role, TuningSession
from ui.pages.hosts import HostsPage, HostState
from ui.wizard import TuningWizard

from .wizard_driver import add_host


def _wizard(qtbot, session: TuningSession, bridge) -> TuningWizard:  # type: ignore[no-untyped-def]
    wizard = TuningWizard(session, bridge)
    qtbot.addWidget(wizard)
    wizard.show()
    return wizard


def test_trusting_the_key_connects_and_shows_the_facts(qtbot, session, bridge) -> None:  # type: ignore[no-untyped-def]
    wizard = _wizard(qtbot, session, bridge)
    page = wizard.page_of(HostsPage)
    assert isinstance(page, HostsPage)
    page.add_host("nfs-server", Role.SERVER)
    qtbot.waitUntil(lambda: page.trust_dialog is not None and page.trust_dialog.isVisible())
    assert page.trust_dialog is not None
    assert page.trust_dialog.fingerprint.text().startswith("SHA256:")
    assert "nfs-server" in page.trust_dialog.windowTitle()
    page.trust_dialog.trust_button.click()
    qtbot.waitUntil(lambda: page.rows["nfs-server"].state is HostState.OK)
    assert not page.isComplete()  # a server alone is not enough
    page.table.selectRow(0)
    assert "md0 raid6" in page.facts_view.toPlainText()
    assert page.table.item(0, 3).text().startswith("6.8")  # kernel at a glance
    assert page.offered_list.count() == 4  # the server's NFS clients are offered
    add_host(qtbot, page, "client1", Role.CLIENT)
    assert page.isComplete()
    assert "Ready" in page.summary.text()
    assert session.server == "nfs-server" and session.clients == ["client1"]


def test_a_rejected_key_is_not_connected(qtbot, session, bridge) -> None:  # type: ignore[no-untyped-def]
    wizard = _wizard(qtbot, session, bridge)
    page = wizard.page_of(HostsPage)
    add_host(qtbot, page, "client2", Role.CLIENT, trust=False)
    assert page.rows["client2"].state is HostState.REJECTED
    assert "not trusted" in page.rows["client2"].error
    assert not page.isComplete()


def test_an_unreachable_host_says_why(qtbot, session, bridge) -> None:  # type: ignore[no-untyped-def]
    wizard = _wizard(qtbot, session, bridge)
    page = wizard.page_of(HostsPage)
    page.add_host("unreachable-box", Role.CLIENT)
    qtbot.waitUntil(lambda: page.rows["unreachable-box"].state is HostState.FAILED)
    assert page.table.item(0, 2).text() == "failed"
    assert "connection to port 22 was refused" in page.table.item(0, 2).toolTip()
    page.table.selectRow(0)
    assert "connection to port 22 was refused" in page.facts_view.toPlainText()


def test_a_typed_name_with_shell_syntax_is_refused(qtbot, session, bridge) -> None:  # type: ignore[no-untyped-def]
    wizard = _wizard(qtbot, session, bridge)
    page = wizard.page_of(HostsPage)
    page.name_edit.setText("srv; rm -rf /")
    page.add_button.click()
    assert not page.rows
    assert "not a host name" in page.name_error.text()


def test_a_second_server_replaces_the_first(qtbot, session, bridge) -> None:  # type: ignore[no-untyped-def]
    wizard = _wizard(qtbot, session, bridge)
    page = wizard.page_of(HostsPage)
    add_host(qtbot, page, "nfs-server", Role.SERVER)
    add_host(qtbot, page, "backup-box", Role.SERVER)
    assert [r.name for r in page.rows.values() if r.role is Role.SERVER] == ["backup-box"]
    assert session.server == "backup-box"
