"""Page 2: what the hardware can do, and what today's configuration gets.

Measuring loads the hosts (full-speed TCP, the server's disk, the export), so it starts
only on "Measure baseline", after the page has said which steps load which hosts and for
about how long; while it runs the bar counts those steps, and a failure stays a failure
(the bar where it stopped, the error large, a way to measure again)."""

from __future__ import annotations

import asyncio
import sys

from PySide6.QtCore import QSize, Qt, Slot
from PySide6.QtGui import QColor, QIcon, QPalette
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
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.session import WORKLOADS, Baseline, BaselineStep, BaselineStepStarted, SessionError
from app.session.choices import DEFAULT_BASELINE_WORKLOADS
from app.vocabulary import duration_text, figure_text, pace_note, planned_text, workload_label
from ui.async_tasks import spawn
from ui.failure_panel import FailurePanel
from ui.focus import tab_moves_on
from ui.live_plot import ThroughputPlot
from ui.pages.base import Page
from ui.theme import ERROR_COLOUR, emphasize
from ui.tooltips import plain_tip

HINT = ("Measuring puts load on the hosts: full-speed network traffic, the server's disk and I/O on "
        "the export, step by step as listed. No setting on any host is changed. It starts only when "
        "you press Measure baseline.")  # fmt: skip


def _table(headers: tuple[str, ...], name: str, parent: QWidget) -> QTableWidget:
    table = QTableWidget(0, len(headers), parent)
    table.setHorizontalHeaderLabels(headers)
    table.setAccessibleName(name)
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    tab_moves_on(table)
    table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    return table


class BaselinePage(Page):
    TITLE = "Baseline"
    SUBTITLE = "The ceilings of the network and the server's disks, then today's configuration, measured live."

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.task: asyncio.Task[Baseline] | None = None
        self.steps: tuple[BaselineStep, ...] = ()
        self.step_index = -1  # the step running, or where the last measurement stopped
        self._measured_on: tuple[str | None, tuple[str, ...]] = (None, ())  # (server, clients) of the baseline
        self.workload_list = QListWidget(self)
        self.workload_list.setAccessibleName("Workloads to measure")
        for w in WORKLOADS:
            item = QListWidgetItem(w.label, self.workload_list)
            item.setData(Qt.ItemDataRole.UserRole, w.kind)
            item.setToolTip(w.description)
            default = w.kind in DEFAULT_BASELINE_WORKLOADS
            item.setCheckState(Qt.CheckState.Checked if default else Qt.CheckState.Unchecked)
        self.workload_list.itemChanged.connect(self.show_steps)
        self.step_list = QListWidget(self)
        self.step_list.setObjectName("baselineSteps")
        self.step_list.setAccessibleName("Steps of the baseline")
        self.step_list.setWordWrap(True)
        self.step_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.step_list.setIconSize(QSize(16, 16))
        self.measure_button = QPushButton("&Measure baseline", self)
        self.measure_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay))
        self.measure_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("S&top", self)  # &S is the Sessions menu's
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar(self)
        self.progress.setObjectName("baselineProgress")
        self._bar_palette = self.progress.palette()
        self.estimate = QLabel(self)
        self.estimate.setObjectName("baselineEstimate")
        self.estimate.setWordWrap(True)
        emphasize(self.estimate)
        self.status = QLabel("Not measured yet.", self)
        self.status.setObjectName("baselineStatus")
        self.status.setWordWrap(True)
        self.failure = FailurePanel("Measure &again", self)
        self.failure.retry_button.clicked.connect(self.start)
        self.plot = ThroughputPlot(self.bridge.live, self, title="Live: all clients")
        self.bridge.tick.connect(self.plot.refresh)
        self.bridge.baselineStep.connect(self.on_step)
        self.ceilings = _table(("Ceiling", "Throughput"), "Ceilings of the network and disks", self)
        self.current = _table(("Workload, today's configuration", "Throughput"), "Today's configuration", self)

        side = QWidget(self)
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        box = QGroupBox("Workloads", self)
        QVBoxLayout(box).addWidget(self.workload_list)
        side_layout.addWidget(box, 2)
        steps_box = QGroupBox("Steps", self)
        QVBoxLayout(steps_box).addWidget(self.step_list)
        side_layout.addWidget(steps_box, 3)
        buttons = QHBoxLayout()
        buttons.addWidget(self.measure_button, 1)
        buttons.addWidget(self.cancel_button)
        side_layout.addLayout(buttons)
        side_layout.addWidget(self.progress)
        side_layout.addWidget(self.estimate)
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
        split.setSizes([330, 870])
        layout = self.body_layout()
        layout.addWidget(self.hint(HINT))
        layout.addWidget(self.failure)
        layout.addWidget(self.plot.stability)
        layout.addWidget(split, 1)
        self._set_running(False)
        self._show_bar("not started", 0)

    def selected_workloads(self) -> tuple[str, ...]:
        return tuple(
            str(self.workload_list.item(i).data(Qt.ItemDataRole.UserRole))
            for i in range(self.workload_list.count())
            if self.workload_list.item(i).checkState() == Qt.CheckState.Checked
        )

    def initializePage(self) -> None:
        """Only says what measuring would do: it loads the hosts, so it waits for the button."""
        hosts = (self.session.server, tuple(self.session.clients))
        if self.task is None and self.state.baseline is not None and hosts != self._measured_on:
            self.state.baseline = None  # measured on other hosts: it says nothing about these
            self.ceilings.setRowCount(0)
            self.current.setRowCount(0)
        if self.task is None and self.state.baseline is None:
            self.show_steps()

    @Slot()
    def show_steps(self, *_args: object) -> None:
        """The steps the chosen workloads take, with the time each is expected to take."""
        if self.task is not None:
            return
        workloads = self.selected_workloads()
        try:
            self.steps = self.session.baseline_steps(workloads) if workloads else ()
        except SessionError as exc:  # no hosts connected (the page shown on its own)
            self.steps = ()
            self.status.setText(str(exc))
        self.step_list.clear()
        for i, step in enumerate(self.steps, start=1):
            real = " on real hosts" if self.session.speed != 1 else ""  # the line below says the demo's pace
            item = QListWidgetItem(f"{i}. {step.what} (about {duration_text(step.expected_s)}{real})", self.step_list)
            item.setToolTip(plain_tip(f"On {', '.join(step.hosts)}: {step.load}"))
        total = sum(step.expected_s for step in self.steps)
        self.estimate.setText(f"{len(self.steps)} steps of load on the hosts, {planned_text(total, self.session.speed)}."
                              if self.steps else "Choose at least one workload.")  # fmt: skip
        if self.state.baseline is None and not self.failure.isVisible():
            self.step_index = -1
            self._set_running(False)
            self.progress.setRange(0, max(len(self.steps), 1))
            self._show_bar("not started", 0)
            if self.steps:
                self.status.setText("Not measured yet: press Measure baseline when the hosts can take the load.")

    @Slot()
    def start(self) -> None:
        workloads = self.selected_workloads()
        if not workloads:
            self.status.setText("Choose at least one workload.")
            return
        self.show_steps()
        if not self.steps:
            return
        self.state.baseline = None
        self.step_index = -1
        self.failure.hide()
        self.ceilings.setRowCount(0)
        self.current.setRowCount(0)
        self._set_running(True)
        self._show_bar(f"starting, {len(self.steps)} steps", 0)
        self.status.setText("Starting…")
        self.task = spawn(self.session.baseline(workloads), on_done=self._done, owner=self)
        self.completeChanged.emit()

    @Slot(object)
    def on_step(self, ev: BaselineStepStarted) -> None:
        if self.task is None:
            return
        self.step_index = ev.index
        self._mark_steps(running=True)
        left = ev.step.expected_s + sum(s.expected_s for s in self.steps[ev.index + 1:])
        self.progress.setRange(0, ev.total)
        self._show_bar(f"step {ev.index + 1} of {ev.total}", ev.index)
        self.estimate.setText(f"About {duration_text(left / self.session.speed)} left{pace_note(self.session.speed)}.")
        self.status.setText(f"Step {ev.index + 1} of {ev.total}: {ev.step.what}, on {', '.join(ev.step.hosts)}. "
                            f"{ev.step.load[:1].upper()}{ev.step.load[1:]}.")  # fmt: skip

    @Slot()
    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _done(self, task: asyncio.Task[Baseline]) -> None:
        self.task = None
        self._set_running(False)
        where = f"step {self.step_index + 1} of {len(self.steps)}" if self.step_index >= 0 else "its start"
        if task.cancelled():
            self._mark_steps(running=False)
            self._show_bar(f"stopped at {where}", max(self.step_index, 0))
            self.estimate.clear()
            self.status.setText("Stopped; nothing more runs on the hosts. Measure again to go on.")
        elif (exc := task.exception()) is not None:
            self.show_failure(where, str(exc))
            if not isinstance(exc, SessionError):
                sys.excepthook(type(exc), exc, exc.__traceback__)  # a bug: the crash dialog
        else:
            self.show_result(task.result())
        self.completeChanged.emit()

    def show_failure(self, where: str, error: str) -> None:
        """Failure as failure: the bar red where it stopped, the error large, a way to measure again."""
        self._mark_steps(running=False, failed=True)
        self._show_bar(f"failed at {where}", max(self.step_index, 0), failed=True)
        step = self.steps[self.step_index].what if 0 <= self.step_index < len(self.steps) else ""
        self.failure.show_failure(f"The baseline failed at {where}" + (f" ({step})" if step else "") + ".", error)
        self.estimate.clear()
        self.status.setText("Not measured. Nothing more runs on the hosts; fix the cause, then measure again.")

    def show_result(self, result: Baseline) -> None:
        self.state.baseline = result
        self._measured_on = (self.session.server, tuple(self.session.clients))
        self.ceilings.setRowCount(len(result.ceilings))
        for i, c in enumerate(result.ceilings):
            self.ceilings.setItem(i, 0, QTableWidgetItem(c.what))
            self.ceilings.setItem(i, 1, QTableWidgetItem(figure_text(c.bps)))
        self.current.setRowCount(len(result.today))
        for i, (w, bps) in enumerate(result.today.items()):
            self.current.setItem(i, 0, QTableWidgetItem(workload_label(w)))
            self.current.setItem(i, 1, QTableWidgetItem(figure_text(bps)))
        self.step_index = len(self.steps)
        self._mark_steps(running=False)
        self.progress.setRange(0, max(len(self.steps), 1))
        self._show_bar(f"all {len(self.steps)} steps done", self.progress.maximum())
        self.estimate.clear()
        self.status.setText("Baseline measured. Next: choose what to try.")

    def _mark_steps(self, running: bool, failed: bool = False) -> None:
        """Done steps ticked, the current one running or failed, the rest plain."""
        icons = self.style().standardIcon
        for i in range(self.step_list.count()):
            item = self.step_list.item(i)
            if i < self.step_index:
                item.setIcon(icons(QStyle.StandardPixmap.SP_DialogApplyButton))
            elif i == self.step_index and (running or failed):
                item.setIcon(icons(QStyle.StandardPixmap.SP_MessageBoxCritical if failed
                                   else QStyle.StandardPixmap.SP_MediaPlay))  # fmt: skip
            else:
                item.setIcon(QIcon())

    def _show_bar(self, text: str, value: int, failed: bool = False) -> None:
        self.progress.setValue(value)
        self.progress.setFormat(text)
        pal = QPalette(self._bar_palette)
        if failed:
            pal.setColor(QPalette.ColorRole.Highlight, QColor(ERROR_COLOUR))
            pal.setColor(QPalette.ColorRole.Text, QColor(ERROR_COLOUR))
        self.progress.setPalette(pal)

    def _set_running(self, running: bool) -> None:
        self.measure_button.setEnabled(not running)
        self.measure_button.setText("&Measure again" if not running and self.step_index >= 0 else "&Measure baseline")
        self.failure.retry_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.workload_list.setEnabled(not running)

    def isComplete(self) -> bool:
        return self.state.baseline is not None and self.task is None
