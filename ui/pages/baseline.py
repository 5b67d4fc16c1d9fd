"""Page 2: what the hardware can do, and what today's configuration gets."""

from __future__ import annotations

import asyncio
import sys

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.session import WORKLOADS, Baseline, SessionError
from app.session.choices import DEFAULT_BASELINE_WORKLOADS
from ui.async_tasks import spawn
from ui.live_plot import ThroughputPlot
from ui.pages.base import Page, mb_s


def _table(headers: tuple[str, ...], parent: QWidget) -> QTableWidget:
    table = QTableWidget(0, len(headers), parent)
    table.setHorizontalHeaderLabels(headers)
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    return table


class BaselinePage(Page):
    TITLE = "Baseline"
    SUBTITLE = "The ceilings of the network and the server's disks, then today's configuration, measured live."

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.task: asyncio.Task[Baseline] | None = None
        self.workload_list = QListWidget(self)
        self.workload_list.setAccessibleName("Workloads to measure")
        for w in WORKLOADS:
            item = QListWidgetItem(w.label, self.workload_list)
            item.setData(Qt.ItemDataRole.UserRole, w.kind)
            item.setToolTip(w.description)
            default = w.kind in DEFAULT_BASELINE_WORKLOADS
            item.setCheckState(Qt.CheckState.Checked if default else Qt.CheckState.Unchecked)
        self.measure_button = QPushButton("&Measure", self)
        self.measure_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("&Stop", self)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1)
        self.status = QLabel("Not measured yet.", self)
        self.status.setObjectName("baselineStatus")
        self.status.setWordWrap(True)
        self.plot = ThroughputPlot(self.bridge.live, self, title="Live: all clients")
        self.bridge.tick.connect(self.plot.refresh)
        self.ceilings = _table(("Ceiling", "Throughput"), self)
        self.current = _table(("Workload, today's configuration", "Throughput"), self)

        side = QWidget(self)
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        box = QGroupBox("Workloads", self)
        QVBoxLayout(box).addWidget(self.workload_list)
        side_layout.addWidget(box, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.measure_button)
        buttons.addWidget(self.cancel_button)
        side_layout.addLayout(buttons)
        side_layout.addWidget(self.progress)
        side_layout.addWidget(self.status)
        tables = QWidget(self)
        tables_layout = QVBoxLayout(tables)
        tables_layout.setContentsMargins(0, 0, 0, 0)
        tables_layout.addWidget(self.ceilings)
        tables_layout.addWidget(self.current)
        main = QSplitter(Qt.Orientation.Vertical, self)
        main.addWidget(self.plot)
        main.addWidget(tables)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(side)
        split.addWidget(main)
        split.setStretchFactor(1, 4)
        split.setSizes([260, 940])
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint("The plot shows the summed throughput of all clients while each "
                                   "measurement runs; nothing on the hosts is changed here."))
        layout.addWidget(self.plot.stability)
        layout.addWidget(split, 1)
        self._set_running(False)

    def selected_workloads(self) -> tuple[str, ...]:
        return tuple(
            str(self.workload_list.item(i).data(Qt.ItemDataRole.UserRole))
            for i in range(self.workload_list.count())
            if self.workload_list.item(i).checkState() == Qt.CheckState.Checked
        )

    def initializePage(self) -> None:
        if self.state.baseline is None and self.task is None:
            self.start()

    @Slot()
    def start(self) -> None:
        workloads = self.selected_workloads()
        if not workloads:
            self.status.setText("Choose at least one workload.")
            return
        self.state.baseline = None
        self._set_running(True)
        self.status.setText("Measuring the network, the server's disks and today's configuration…")
        self.task = spawn(self.session.baseline(workloads), on_done=self._done, owner=self)

    @Slot()
    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _done(self, task: asyncio.Task[Baseline]) -> None:
        self.task = None
        self._set_running(False)
        if task.cancelled():
            self.status.setText("Stopped. Measure again to go on.")
        elif isinstance(task.exception(), SessionError):
            self.status.setText(str(task.exception()))
        elif task.exception() is not None:
            exc = task.exception()
            assert exc is not None
            sys.excepthook(type(exc), exc, exc.__traceback__)  # a bug: the crash dialog
        else:
            self.show_result(task.result())
        self.completeChanged.emit()

    def show_result(self, result: Baseline) -> None:
        self.state.baseline = result
        self.ceilings.setRowCount(len(result.ceilings))
        for i, c in enumerate(result.ceilings):
            self.ceilings.setItem(i, 0, QTableWidgetItem(c.what))
            self.ceilings.setItem(i, 1, QTableWidgetItem(mb_s(c.bps)))
        labels = {w.kind: w.label for w in WORKLOADS}
        self.current.setRowCount(len(result.today))
        for i, (w, bps) in enumerate(result.today.items()):
            self.current.setItem(i, 0, QTableWidgetItem(labels.get(w, w)))
            self.current.setItem(i, 1, QTableWidgetItem(mb_s(bps)))
        self.status.setText("Baseline measured. Next: choose what to try.")

    def _set_running(self, running: bool) -> None:
        self.progress.setRange(0, 0 if running else 1)  # busy indicator while measuring
        self.progress.setValue(0 if running else 1)
        self.measure_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.workload_list.setEnabled(not running)

    def isComplete(self) -> bool:
        return self.state.baseline is not None and self.task is None
