"""Page 1: the server and its clients, each connected, trusted and described.

Nothing is dropped or replaced without a word: a second server asks whether it replaces
the first, and Next names the hosts that are not connected (and why) before it leaves
them out."""

from __future__ import annotations

import asyncio
import html
import re
from dataclasses import dataclass
from enum import Enum

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.facts.model import HostFacts
from app.session import Role, SessionError, UnknownHostKey
from app.vocabulary import memory_text
from ui.async_tasks import dialog_result, spawn
from ui.focus import tab_moves_on
from ui.table_fit import ColumnFit
from ui.theme import buddy_label
from ui.pages.base import Page
from ui.trust_dialog import TrustDialog
from ui.tooltips import plain_tip

# What ssh accepts as a destination: user@host, names, IPv4, [IPv6]; never shell syntax.
HOST_RE = re.compile(r"^(?:[A-Za-z0-9._-]+@)?(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:]+\])$")
COLUMNS = ("Host", "Role", "Status", "Kernel", "NIC / MTU", "Storage", "Exports / mounts", "Privilege")


class HostState(Enum):
    NEW = "not tested"
    CONNECTING = "connecting…"
    OK = "connected"
    FAILED = "failed"
    REJECTED = "key not trusted"


@dataclass(slots=True)
class HostRow:
    name: str
    role: Role
    state: HostState = HostState.NEW
    facts: HostFacts | None = None
    error: str = ""


def nic_lines(f: HostFacts) -> list[str]:
    return [f"{n.name} MTU {n.mtu or '?'}, {n.speed_mbps or '?'} Mb/s" + (f", {n.addresses[0]}" if n.addresses else "")
            for n in f.nics if n.name != "lo"]  # fmt: skip


def md_lines(f: HostFacts) -> list[str]:
    return [f"{a.name} {a.level} {a.state}, {a.raid_disks or len(a.members)} disks"
            + (f", chunk {a.chunk_kb}K" if a.chunk_kb else "")
            + (f", stripe_cache_size {a.stripe_cache_size}" if a.stripe_cache_size is not None else "")
            for a in f.md_arrays]  # fmt: skip


def share_lines(f: HostFacts) -> list[str]:
    """A server's exports, a client's NFS mounts with their negotiated options."""
    exports = [f"{e.path} {e.client}({','.join(e.options)})" for e in f.exports]
    mounts = [f"{m.source} on {m.mount_point} type {m.fstype} (vers={m.version or '?'},rsize={m.rsize},"
              f"wsize={m.wsize},nconnect={m.nconnect or 1})" for m in f.nfs_mounts]  # fmt: skip
    return exports or mounts


def storage_cell(f: HostFacts) -> str:
    """The table's short word on a host's md arrays ('md0 raid6, 8 disks'); the facts pane has the rest."""
    return "; ".join(f"{a.name} {a.level}, {a.raid_disks or len(a.members)} disks" for a in f.md_arrays)


def shares_cell(f: HostFacts) -> str:
    """The table's short word on a server's exports (their paths) or a client's NFS mounts (where, which version)."""
    exports = dict.fromkeys(e.path for e in f.exports)
    return ", ".join(exports) or ", ".join(f"{m.mount_point} (NFS {m.version or '?'})" for m in f.nfs_mounts)


def privilege_text(f: HostFacts) -> str:
    return f.privilege + (f" as {f.user}" if f.user and f.user != "root" else "")


class HostsPage(Page):
    TITLE = "Hosts"
    SUBTITLE = "Add the NFS server and the clients to test from. Each is connected over SSH and described."

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.rows: dict[str, HostRow] = {}
        self._trust_lock = asyncio.Lock()
        self.trust_dialog: TrustDialog | None = None
        self.server_question: QMessageBox | None = None
        self.left_out_question: QMessageBox | None = None
        self._left_out_agreed: frozenset[str] | None = None  # the hosts the admin agreed to leave out at Next

        # adding hosts
        self.name_edit = QLineEdit(self)
        self.name_edit.setPlaceholderText("host name, user@host or address")
        self.name_edit.setAccessibleName("Host name")
        self.role_box = QComboBox(self)
        self.role_box.addItem("Server", Role.SERVER)
        self.role_box.addItem("Client", Role.CLIENT)
        self.role_box.setAccessibleName("Role of the host")
        self.add_button = QPushButton("&Add", self)
        self.add_button.clicked.connect(self._add_typed)
        self.name_edit.returnPressed.connect(self._add_typed)
        self.name_error = QLabel(self)
        self.name_error.setObjectName("nameError")
        self.name_error.setWordWrap(True)
        self.name_error.hide()  # no blank row under the fields until there is something to say
        self.ssh_list = QListWidget(self)
        self.ssh_list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.ssh_list.addItems(self.session.host_names())
        self.ssh_list.setAccessibleName("Hosts from the SSH configuration")
        self.ssh_server = QPushButton("As s&erver", self)  # &S is the Sessions menu's
        self.ssh_clients = QPushButton("As &clients", self)
        self.ssh_server.clicked.connect(lambda: self._add_from_list(self.ssh_list, Role.SERVER))
        self.ssh_clients.clicked.connect(lambda: self._add_from_list(self.ssh_list, Role.CLIENT))
        self.offered_list = QListWidget(self)
        self.offered_list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.offered_add = QPushButton("Add &offered clients", self)
        self.offered_add.clicked.connect(self._add_offered)

        add_box = QGroupBox("Add a host", self)
        grid = QGridLayout(add_box)
        # the label above the field: beside it, the column was too wide for the hosts' table on a small screen
        grid.addWidget(buddy_label("Na&me:", self.name_edit, self), 0, 0, 1, 2)  # &N is Next's
        grid.addWidget(self.name_edit, 1, 0, 1, 2)
        grid.addWidget(self.role_box, 2, 0)
        grid.addWidget(self.add_button, 2, 1)
        grid.addWidget(self.name_error, 3, 0, 1, 2)
        ssh_box = QGroupBox("From ~/.ssh/config", self)
        ssh_layout = QVBoxLayout(ssh_box)
        ssh_layout.addWidget(self.ssh_list)
        row = QHBoxLayout()
        row.addWidget(self.ssh_server)
        row.addWidget(self.ssh_clients)
        ssh_layout.addLayout(row)
        offered_box = QGroupBox("Clients the server sees", self)
        offered_layout = QVBoxLayout(offered_box)
        offered_layout.addWidget(self.offered_list)
        offered_layout.addWidget(self.offered_add)
        for short in (self.ssh_list, self.offered_list):  # on a short screen they scroll from three rows
            short.setMinimumHeight(3 * short.fontMetrics().lineSpacing() + 2 * short.frameWidth())
        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(add_box)
        left_layout.addWidget(ssh_box, 1)
        left_layout.addWidget(offered_box, 1)

        # the hosts and their facts
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        tab_moves_on(self.table)
        self.table.verticalHeader().hide()
        self.table_fit = ColumnFit(self.table, narrow=(4, 5, 6, 7), spare=6)  # NICs, storage, exports, privilege wrap
        self.table.itemSelectionChanged.connect(self._show_facts)
        self.table.setAccessibleName("Hosts")
        self.retest_button = QPushButton("&Test again", self)
        self.retest_button.clicked.connect(self._retest_selected)
        self.remove_button = QPushButton("&Remove", self)
        self.remove_button.clicked.connect(self._remove_selected)
        self.facts_view = QTextBrowser(self)
        self.facts_view.setAccessibleName("Facts of the selected host")
        self.summary = QLabel(self)
        self.summary.setObjectName("hostsSummary")
        self.summary.setWordWrap(True)  # the hosts left out can be many: it wraps, never widens the page
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.table, 3)
        buttons = QHBoxLayout()
        buttons.addWidget(self.summary, 1)
        buttons.addWidget(self.retest_button)
        buttons.addWidget(self.remove_button)
        right_layout.addLayout(buttons)
        right_layout.addWidget(self.facts_view, 2)

        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(1, 3)
        split.setSizes([250, 950])
        layout = self.body_layout()
        layout.addWidget(split)
        self._refresh_summary()

    # --- adding ---
    @Slot()
    def _add_typed(self) -> None:
        name = self.name_edit.text().strip()
        if not HOST_RE.match(name):
            self.name_error.setText(f"“{html.escape(name)}” is not a host name ssh would accept." if name
                                    else "Type a host name first.")
            self.name_error.show()
            return
        self.name_error.clear()
        self.name_error.hide()
        if self.add_host(name, Role(self.role_box.currentData())):  # Qt hands the enum back as its str
            self._typed_added(name)

    def _typed_added(self, name: str) -> None:
        if self.name_edit.text().strip() == name:
            self.name_edit.clear()

    def _add_from_list(self, widget: QListWidget, role: Role) -> None:
        for item in widget.selectedItems():
            self.add_host(item.text(), role)
            if role is Role.SERVER:
                break  # one server

    def _add_offered(self) -> None:
        items = self.offered_list.selectedItems() or [self.offered_list.item(i) for i in range(self.offered_list.count())]
        for item in items:
            self.add_host(item.text(), Role.CLIENT)

    def add_host(self, name: str, role: Role) -> bool:
        """Add and test ``name``; False when a server is already there and the admin is asked first."""
        current = next((r for r in self.rows.values() if r.role is Role.SERVER and r.name != name), None)
        if role is Role.SERVER and current is not None:
            self.ask_replace_server(current, name)
            return False
        self._put_host(name, role)
        return True

    def _put_host(self, name: str, role: Role) -> None:
        if role is Role.SERVER:  # one server: the admin chose to replace the old one
            for old in [r.name for r in self.rows.values() if r.role is Role.SERVER and r.name != name]:
                self.remove_host(old)
            self.role_box.setCurrentIndex(self.role_box.findData(Role.CLIENT.value))  # the next is most likely a client
        if name in self.rows and self.rows[name].role is role and self.rows[name].state is HostState.OK:
            return
        self.rows[name] = HostRow(name, role)
        self._render()
        self.test_host(name)

    def ask_replace_server(self, current: HostRow, name: str) -> None:
        """A session has one server: replacing it is the admin's explicit choice, never a side effect."""
        box = QMessageBox(QMessageBox.Icon.Question, "Replace the server?",
                          f"{current.name} is this session's server ({current.state.value}). A session has "
                          f"one server.\n\nMake {name} the server instead, or add {name} as a client?",
                          parent=self)  # fmt: skip
        box.setObjectName("replaceServerQuestion")
        box.setTextFormat(Qt.TextFormat.PlainText)  # host names are data
        replace = box.addButton(f"&Replace {current.name} with {name}", QMessageBox.ButtonRole.AcceptRole)
        client = box.addButton(f"&Add {name} as a client", QMessageBox.ButtonRole.ActionRole)
        cancel = box.addButton("&Cancel", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)

        def answered(_result: int) -> None:
            clicked = box.clickedButton()
            if clicked is replace or clicked is client:
                self._put_host(name, Role.SERVER if clicked is replace else Role.CLIENT)
                self._typed_added(name)

        box.finished.connect(answered)
        self.server_question = box
        box.open()

    def remove_host(self, name: str) -> None:
        self.rows.pop(name, None)
        self.session.forget(name)
        self._render()

    def test_host(self, name: str) -> None:
        row = self.rows[name]
        row.state, row.error = HostState.CONNECTING, ""
        self._render()
        spawn(self._connect(row), owner=self)

    async def _connect(self, row: HostRow) -> None:
        try:
            facts = await self.session.connect(row.name, row.role, self.ask_trust)
        except SessionError as exc:
            row.state = HostState.REJECTED if "not trusted" in str(exc) else HostState.FAILED
            row.error = str(exc)
        else:
            row.state, row.facts = HostState.OK, facts
            if row.role is Role.SERVER:
                self.offered_list.clear()
                self.offered_list.addItems([c for c in self.session.offered_clients(row.name) if c not in self.rows])
        if self.rows.get(row.name) is row:
            self._render()

    async def ask_trust(self, host: str, key: UnknownHostKey) -> bool:
        """One trust question at a time, even when several hosts connect at once."""
        async with self._trust_lock:
            self.trust_dialog = TrustDialog(host, key, self.window())
            try:
                return await dialog_result(self.trust_dialog) == TrustDialog.DialogCode.Accepted
            finally:
                self.trust_dialog.deleteLater()
                self.trust_dialog = None

    def _selected(self) -> str | None:
        items = self.table.selectedItems()
        name = self.table.item(items[0].row(), 0) if items else None
        return name.text() if name is not None else None

    def _retest_selected(self) -> None:
        name = self._selected()
        if name:
            self.test_host(name)

    def _remove_selected(self) -> None:
        name = self._selected()
        if name:
            self.remove_host(name)

    # --- showing ---
    def _render(self) -> None:
        selected = self._selected()
        self.table.setRowCount(len(self.rows))
        order = sorted(self.rows.values(), key=lambda r: (r.role is not Role.SERVER, r.name))
        for i, row in enumerate(order):
            f = row.facts
            nics = ", ".join(f"{n.name} {n.mtu}" + (f" @ {n.speed_mbps // 1000} Gb/s" if n.speed_mbps and n.speed_mbps >= 1000 else "")
                             for n in f.nics if n.name != "lo") if f else ""
            status = row.state.value  # the why is in the tooltip and the facts pane: columns stay readable
            cells = (row.name, row.role.value, status, f.kernel if f else "", nics, storage_cell(f) if f else "",
                     shares_cell(f) if f else "", privilege_text(f) if f else "")
            tips = {5: "\n".join(md_lines(f)), 6: "\n".join(share_lines(f))} if f else {}
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(plain_tip(tips.get(col, text)))
                if col == 2:
                    item.setIcon(self._state_icon(row.state))
                    item.setToolTip(plain_tip(row.error or text))
                self.table.setItem(i, col, item)
            if row.name == selected:
                self.table.selectRow(i)
        self._show_facts()
        self._refresh_summary()
        self.completeChanged.emit()

    def _state_icon(self, state: HostState):  # type: ignore[no-untyped-def]
        pixmap = {
            HostState.OK: QStyle.StandardPixmap.SP_DialogApplyButton,
            HostState.FAILED: QStyle.StandardPixmap.SP_MessageBoxCritical,
            HostState.REJECTED: QStyle.StandardPixmap.SP_MessageBoxWarning,
            HostState.CONNECTING: QStyle.StandardPixmap.SP_BrowserReload,
        }.get(state, QStyle.StandardPixmap.SP_MessageBoxQuestion)
        return self.style().standardIcon(pixmap)

    def _show_facts(self) -> None:
        name = self._selected()
        row = self.rows.get(name or "")
        if row is None:
            self.facts_view.setHtml("<p>Select a host to see what was found on it.</p>")
            return
        f = row.facts
        if f is None:
            self.facts_view.setHtml(f"<h3>{html.escape(row.name)}</h3><p>{html.escape(row.error or row.state.value)}</p>")
            return
        items = [("Kernel", f.kernel), ("System", f.os.pretty_name), ("CPUs", str(f.cpu_count or "?")),
                 ("Memory", memory_text(f.mem_total_kb)), ("Privilege", privilege_text(f))]
        items += [("NIC", n) for n in nic_lines(f)] + [("md array", a) for a in md_lines(f)]
        items += [("export" if f.exports else "mount", e) for e in share_lines(f)]
        body = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(v)}</td></tr>" for k, v in items)
        self.facts_view.setHtml(f"<h3>{html.escape(f.host)} ({row.role.value})</h3><table cellspacing=4>{body}</table>")

    def _refresh_summary(self) -> None:
        server = [r for r in self.rows.values() if r.role is Role.SERVER and r.state is HostState.OK]
        clients = [r for r in self.rows.values() if r.role is Role.CLIENT and r.state is HostState.OK]
        need = []
        if not server:
            need.append("a connected server")
        if not clients:
            need.append("at least one connected client")
        text = ("Ready: 1 server, %d client(s)." % len(clients) if not need
                else "Still needed: " + " and ".join(need) + ".")  # fmt: skip
        if out := self._not_connected():
            text += f" Not connected, left out at Next: {', '.join(r.name for r in out)}."
        self.summary.setText(text)

    def _not_connected(self) -> list[HostRow]:
        return [r for r in self.rows.values() if r.state is not HostState.OK]

    # --- QWizardPage ---
    def isComplete(self) -> bool:
        states = [r.state for r in self.rows.values()]
        has_server = any(r.role is Role.SERVER and r.state is HostState.OK for r in self.rows.values())
        has_client = any(r.role is Role.CLIENT and r.state is HostState.OK for r in self.rows.values())
        return has_server and has_client and HostState.CONNECTING not in states

    def validatePage(self) -> bool:
        out = self._not_connected()
        agreed, self._left_out_agreed = self._left_out_agreed, None
        if out and agreed != frozenset(r.name for r in out):
            self.ask_leave_out(out)
            return False
        for row in out:
            self.session.forget(row.name)  # only the connected hosts take part
        return True

    def ask_leave_out(self, out: list[HostRow]) -> None:
        """Name the hosts Next would leave out, and why; go on only on the admin's word."""
        why = "\n".join(f"• {r.name} ({r.role.value}): {r.state.value}" + (f" — {r.error}" if r.error else "")
                        for r in out)  # fmt: skip
        them = "it" if len(out) == 1 else "them"
        box = QMessageBox(QMessageBox.Icon.Warning, "Leave hosts out?",
                          f"{'This host is' if len(out) == 1 else 'These hosts are'} not connected and will take "
                          f"no part in the session:\n\n{why}\n\nGo on without {them}, or go back and test or "
                          f"remove {them}?", parent=self)  # fmt: skip
        box.setObjectName("leaveOutQuestion")
        box.setTextFormat(Qt.TextFormat.PlainText)  # host names and their errors are data
        go_on = box.addButton(f"&Go on without {them}", QMessageBox.ButtonRole.AcceptRole)
        back = box.addButton("&Back to the hosts", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(back)
        names = frozenset(r.name for r in out)

        def answered(_result: int) -> None:
            if box.clickedButton() is go_on and self.wizard() is not None:
                self._left_out_agreed = names
                self.wizard().next()

        box.finished.connect(answered)
        self.left_out_question = box
        box.open()
