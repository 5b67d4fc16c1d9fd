"""The last question before a run changes hosts: what changes where, the test mounts, the risk, the time.

Everything shown comes from the application layer's ``RunPreview`` of the very spec the run
gets. "Back" is the default button, so Enter or Escape never starts a run; only a click on
"Start run" (or its mnemonic) does.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.knobs.model import Safety
from app.session import RunPreview
from app.vocabulary import bounds_text, duration_text, pace_note, workload_label
from ui.focus import tab_moves_on
from ui.theme import ERROR_COLOUR, SAFETY_COLOURS, emphasize

COLUMNS = ("Host / change", "Where", "Today", "Values to try")


def _label(text: str, parent: QWidget, name: str) -> QLabel:
    label = QLabel(text, parent)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)  # host names, paths and values are data, never markup
    return label


class RunConfirmation(QDialog):
    def __init__(self, preview: RunPreview, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.preview = preview
        self.setObjectName("runConfirmation")
        self.setWindowTitle("Start the run?")
        self.setModal(True)
        hosts = [h.host for h in preview.hosts]
        est = preview.estimate
        headline = _label(f"Start the run on {len(hosts)} hosts: {', '.join(hosts)}?", self, "confirmHeadline")
        emphasize(headline)
        intro = _label("Each trial sets one configuration of the values below, then puts today's values back at "
                       "the end. Every change is written to the journal before it is made, and each host's "
                       "dead-man switch puts it back if nfs-tuner goes away.", self, "confirmIntro")  # fmt: skip

        self.tree = QTreeWidget(self)
        self.tree.setObjectName("confirmChanges")
        self.tree.setAccessibleName("Changes on each host")
        tab_moves_on(self.tree)
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        server_icon = self.style().standardIcon(QStyle.StandardPixmap.SP_DriveNetIcon)
        client_icon = self.style().standardIcon(QStyle.StandardPixmap.SP_ComputerIcon)
        warn = QColor(SAFETY_COLOURS[Safety.CONNECTIVITY])
        for host in preview.hosts:
            top = QTreeWidgetItem(self.tree, [f"{host.host} ({host.role})"])
            top.setIcon(0, server_icon if host.role == "server" else client_icon)
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            if host.test_mount:
                mount = QTreeWidgetItem(top, ["remount: test mount", host.test_mount, "", "afresh for every trial"])
                mount.setToolTip(0, "nfs-tuner's own mount, with the options of each trial; unmounted at the end")
                for own in host.own_mounts:
                    QTreeWidgetItem(top, ["its own mount", own, "", "left as it is"])
            for change in host.changes:
                item = QTreeWidgetItem(top, [change.title, change.place, change.today, change.values])
                item.setToolTip(0, change.risk or change.knob)
                if change.risk:
                    item.setForeground(0, warn)
            if not host.changes and not host.test_mount:
                QTreeWidgetItem(top, ["no setting changed here", "", "", ""])
        self.tree.expandAll()

        load = _label(f"Load: {', '.join(workload_label(w) for w in preview.workloads)} on every client, in test "
                      "files on the test mount. Before every trial the page caches are dropped on "
                      f"{', '.join(preview.caches_dropped_on)}.", self, "confirmLoad")  # fmt: skip
        risks = sorted({f"⚠ {c.title}: {c.risk}" for h in preview.hosts for c in h.changes
                        if c.risk and c.knob != "export_sync"})  # fmt: skip
        self.risks = _label("\n".join(risks), self, "confirmRisks")
        self.risks.setVisible(bool(risks))
        self.async_label = _label(f"⚠ This run tries async exports on {hosts[0]}, which you agreed to: "
                                  f"{preview.async_risk} Keep the clients' real work off the export meanwhile.",
                                  self, "confirmAsync")  # fmt: skip
        emphasize(self.async_label)
        red = self.async_label.palette()
        red.setColor(QPalette.ColorRole.WindowText, QColor(ERROR_COLOUR))
        self.async_label.setPalette(red)
        self.async_label.setVisible(bool(preview.async_risk))
        self.estimate = _label(f"{est.trials} trials, about {duration_text(est.seconds)} ({bounds_text(est)})"
                               f"{pace_note(preview.speed)}"
                               + (f": about {duration_text(est.seconds / preview.speed)} here." if preview.speed != 1
                                  else "."), self, "confirmEstimate")  # fmt: skip
        emphasize(self.estimate)

        buttons = QDialogButtonBox(self)
        self.start_button = buttons.addButton("&Start run", QDialogButtonBox.ButtonRole.AcceptRole)
        self.back_button = buttons.addButton("&Back", QDialogButtonBox.ButtonRole.RejectRole)
        self.start_button.setAutoDefault(False)
        self.back_button.setAutoDefault(True)
        self.back_button.setDefault(True)  # Enter goes back, never starts
        self.back_button.setFocus()
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(headline)
        layout.addWidget(intro)
        layout.addWidget(self.tree, 1)
        layout.addWidget(load)
        layout.addWidget(self.risks)
        layout.addWidget(self.async_label)
        layout.addWidget(self.estimate)
        layout.addWidget(buttons)
        self.resize(860, 560)

    def rows(self) -> list[tuple[str, ...]]:
        """Every line of the changes, host lines included, as shown (for the tests and the log)."""
        out: list[tuple[str, ...]] = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            assert top is not None
            out.append((top.text(0),))
            for j in range(top.childCount()):
                child = top.child(j)
                assert child is not None
                out.append(tuple(child.text(c) for c in range(len(COLUMNS))))
        return out
