from __future__ import annotations

from PySide6.QtWidgets import QWizard

from app.session import Role, TuningSession
from ui.pages.baseline import BaselinePage
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


def _typed(qtbot, page: HostsPage, name: str, role: Role) -> None:  # type: ignore[no-untyped-def]
    page.role_box.setCurrentIndex(page.role_box.findData(role.value))
    page.name_edit.setText(name)
    page.add_button.click()


def test_a_second_server_is_an_explicit_choice(qtbot, session, bridge) -> None:  # type: ignore[no-untyped-def]
    """Seen: a second host typed with the role box still on Server silently replaced the server."""
    wizard = _wizard(qtbot, session, bridge)
    page = wizard.page_of(HostsPage)
    assert isinstance(page, HostsPage)
    add_host(qtbot, page, "nfs-server", Role.SERVER)
    assert page.role_box.currentData() == Role.CLIENT  # after the server, the box moves on to clients
    _typed(qtbot, page, "backup-box", Role.SERVER)
    qtbot.waitUntil(lambda: page.server_question is not None and page.server_question.isVisible())
    box = page.server_question
    assert box is not None
    assert "nfs-server is this session's server" in box.text() and "backup-box" in box.text()
    assert box.defaultButton() is box.escapeButton() and box.defaultButton().text() == "&Cancel"
    box.defaultButton().click()  # Enter or Escape: nothing changes
    assert list(page.rows) == ["nfs-server"] and session.server == "nfs-server"
    assert page.name_edit.text() == "backup-box"  # kept, to choose again

    _typed(qtbot, page, "backup-box", Role.SERVER)
    qtbot.waitUntil(lambda: page.server_question is not box and page.server_question is not None
                    and page.server_question.isVisible())  # fmt: skip
    box = page.server_question
    assert box is not None
    next(b for b in box.buttons() if b.text() == "&Add backup-box as a client").click()
    qtbot.waitUntil(lambda: page.trust_dialog is not None and page.trust_dialog.isVisible())
    assert page.trust_dialog is not None
    page.trust_dialog.trust_button.click()
    qtbot.waitUntil(lambda: page.rows["backup-box"].state is HostState.OK)
    assert page.rows["backup-box"].role is Role.CLIENT and session.server == "nfs-server"
    assert page.name_edit.text() == ""


def test_replacing_the_server_when_the_admin_says_so(qtbot, session, bridge) -> None:  # type: ignore[no-untyped-def]
    wizard = _wizard(qtbot, session, bridge)
    page = wizard.page_of(HostsPage)
    assert isinstance(page, HostsPage)
    add_host(qtbot, page, "nfs-server", Role.SERVER)
    page.add_host("backup-box", Role.SERVER)  # the SSH list's "As server" takes this way too
    qtbot.waitUntil(lambda: page.server_question is not None and page.server_question.isVisible())
    box = page.server_question
    assert box is not None
    next(b for b in box.buttons() if b.text() == "&Replace nfs-server with backup-box").click()
    qtbot.waitUntil(lambda: page.trust_dialog is not None and page.trust_dialog.isVisible())
    assert page.trust_dialog is not None
    page.trust_dialog.trust_button.click()
    qtbot.waitUntil(lambda: page.rows["backup-box"].state is HostState.OK)
    assert [r.name for r in page.rows.values() if r.role is Role.SERVER] == ["backup-box"]
    assert session.server == "backup-box"


def test_next_names_the_hosts_it_leaves_out_and_asks(qtbot, session, bridge) -> None:  # type: ignore[no-untyped-def]
    """Seen: failed and untrusted hosts were dropped at Next without a word."""
    wizard = _wizard(qtbot, session, bridge)
    page = wizard.page_of(HostsPage)
    assert isinstance(page, HostsPage)
    add_host(qtbot, page, "nfs-server", Role.SERVER)
    add_host(qtbot, page, "client1", Role.CLIENT)
    add_host(qtbot, page, "client2", Role.CLIENT, trust=False)
    page.add_host("unreachable-box", Role.CLIENT)
    qtbot.waitUntil(lambda: page.rows["unreachable-box"].state is HostState.FAILED)
    assert "left out at Next: client2, unreachable-box" in page.summary.text()
    next_button = wizard.button(QWizard.WizardButton.NextButton)
    assert next_button.isEnabled()
    next_button.click()
    qtbot.waitUntil(lambda: page.left_out_question is not None and page.left_out_question.isVisible())
    box = page.left_out_question
    assert box is not None and wizard.currentPage() is page
    text = box.text()
    assert "client2 (client): key not trusted — The key of client2 was not trusted" in text
    assert "unreachable-box (client): failed — " in text and "refused" in text
    assert box.defaultButton().text() == "&Back to the hosts"  # Enter keeps the admin here
    box.defaultButton().click()
    qtbot.wait(50)
    assert wizard.currentPage() is page and "client2" in page.rows

    next_button.click()
    qtbot.waitUntil(lambda: page.left_out_question is not box and page.left_out_question is not None
                    and page.left_out_question.isVisible())  # fmt: skip
    box = page.left_out_question
    assert box is not None
    next(b for b in box.buttons() if b.text() == "&Go on without them").click()
    qtbot.waitUntil(lambda: isinstance(wizard.currentPage(), BaselinePage))
    assert session.server == "nfs-server" and session.clients == ["client1"]


def test_next_asks_nothing_when_every_host_is_connected(qtbot, session, bridge) -> None:  # type: ignore[no-untyped-def]
    wizard = _wizard(qtbot, session, bridge)
    page = wizard.page_of(HostsPage)
    assert isinstance(page, HostsPage)
    add_host(qtbot, page, "nfs-server", Role.SERVER)
    add_host(qtbot, page, "client1", Role.CLIENT)
    wizard.button(QWizard.WizardButton.NextButton).click()
    qtbot.waitUntil(lambda: isinstance(wizard.currentPage(), BaselinePage))
    assert page.left_out_question is None
