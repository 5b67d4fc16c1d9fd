"""Page 4: the sweep, live: plots, finished trials, progress, the journal, and the brakes."""

from __future__ import annotations

import asyncio
import sys

from PySide6.QtCore import QSize, Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.knobs.catalog import SPECS
from app.recommend.units import figure_text
from app.recommend.evidence import config_text
from app.session import SessionError
from app.store import SessionState
from app.sweep.events import Decision, HostLost, JournalChanged, Progress, SweepFinished, SweepStarted, TrialFinished, TrialStarted
from ui.async_tasks import spawn
from ui.live_plot import LivePlots
from ui.pages.base import Page, duration
from ui.questions import ask_to_revert

OUTCOME_TEXT = {SessionState.COMPLETE: "complete", SessionState.CANCELLED: "cancelled and reverted",
                SessionState.INTERRUPTED: "interrupted"}  # fmt: skip


def outcome_text(finished: SweepFinished) -> str:
    return OUTCOME_TEXT.get(SessionState(finished.state), finished.state)


class RunPage(Page):
    TITLE = "Run"
    SUBTITLE = "Each trial applies its settings, remounts, drops caches and runs the workload until it is stable."

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.task: asyncio.Task[SweepFinished] | None = None
        self.finished_trials: list[TrialFinished] = []
        self.paused = False
        self.total = 0
        self.labels = {name: spec.title for name, spec in SPECS.items()}

        self.progress = QProgressBar(self)
        self.progress.setFormat("%v of %m trials")
        self.trial_label = QLabel("Starting…", self)
        self.trial_label.setObjectName("trialLabel")
        self.eta_label = QLabel(self)
        self.eta_label.setObjectName("etaLabel")
        self.pause_button = QPushButton("&Pause", self)
        self.pause_button.clicked.connect(self.toggle_pause)
        self.skip_button = QPushButton("S&kip trial", self)
        self.skip_button.clicked.connect(self.session.skip_trial)
        self.cancel_button = QPushButton("&Cancel and revert", self)
        self.cancel_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_DialogCancelButton))
        self.cancel_button.clicked.connect(self.ask_cancel)
        self.cancel_question: QMessageBox | None = None
        self.host_lost_question: QMessageBox | None = None

        self.plots = LivePlots(self.bridge.live, self)
        self.bridge.tick.connect(self.plots.refresh)

        self.strip = QListWidget(self)
        self.strip.setObjectName("trialStrip")
        self.strip.setFlow(QListView.Flow.LeftToRight)
        self.strip.setWrapping(False)
        self.strip.setViewMode(QListView.ViewMode.IconMode)
        self.strip.setGridSize(QSize(190, 70))
        self.strip.setWordWrap(True)
        self.strip.setMovement(QListView.Movement.Static)
        self.strip.setFixedHeight(92)
        self.strip.setAccessibleName("Finished trials")

        self.journal = QTableWidget(0, 4, self)
        self.journal.setObjectName("journalTable")
        self.journal.setHorizontalHeaderLabels(("Host", "Change", "From → to", "State"))
        self.journal.verticalHeader().hide()
        self.journal.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.journal.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.journal.setAccessibleName("Journal of changes on the hosts")

        top = QHBoxLayout()
        top.addWidget(self.progress, 2)
        top.addWidget(self.eta_label)
        top.addWidget(self.pause_button)
        top.addWidget(self.skip_button)
        top.addWidget(self.cancel_button)
        strip_box = QGroupBox("Finished trials", self)
        QVBoxLayout(strip_box).addWidget(self.strip)
        journal_box = QGroupBox("Journal of changes on the hosts (all put back at the end)", self)
        QVBoxLayout(journal_box).addWidget(self.journal)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.plots)
        split.addWidget(journal_box)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([440, 150])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.trial_label)
        layout.addWidget(split, 1)
        layout.addWidget(strip_box)

        self.bridge.sweepStarted.connect(self.on_sweep_started)
        self.bridge.trialStarted.connect(self.on_trial_started)
        self.bridge.trialFinished.connect(self.on_trial_finished)
        self.bridge.progress.connect(self.on_progress)
        self.bridge.journalChanged.connect(self.on_journal)
        self.bridge.runFinished.connect(self.on_run_finished)

    def initializePage(self) -> None:
        if self.task is not None or self.state.spec is None:
            return
        est = self.session.estimate(self.state.spec)
        self.total = est.trials
        self.progress.setRange(0, est.trials)
        self.progress.setValue(0)
        self.eta_label.setText(f"about {duration(est.seconds)} left")
        self.finished_trials.clear()
        self.strip.clear()
        self.state.finished, self.state.failed = None, ""
        self._set_running(True)
        self.session.decide_host_lost = self.ask_host_lost
        self.task = spawn(self.session.run(self.state.spec), on_done=self._run_done, owner=self)

    async def ask_host_lost(self, lost: HostLost) -> Decision:
        """A host stopped answering: the admin chooses to wait, go on without that client, or stop."""
        box = QMessageBox(QMessageBox.Icon.Warning, "A host stopped answering",
                          f"{lost.host} stopped answering {lost.doing}.\n\nNothing more runs until you choose. "
                          "Its changes are put back by its dead-man switch if it stays away.", parent=self)  # fmt: skip
        box.setObjectName("hostLostQuestion")
        wait = box.addButton(f"&Wait for {lost.host}", QMessageBox.ButtonRole.AcceptRole)
        drop = box.addButton(f"Go on &without {lost.host}", QMessageBox.ButtonRole.ActionRole) \
            if lost.droppable else None  # fmt: skip
        box.addButton("&Stop and put back", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(wait)
        answer: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

        def done(_result: int) -> None:
            clicked = box.clickedButton()
            decision: Decision = "wait" if clicked is wait else "drop" if drop is not None and clicked is drop \
                else "stop"  # fmt: skip
            if not answer.done():
                answer.set_result(decision)

        box.finished.connect(done)
        self.host_lost_question = box
        self.trial_label.setText(f"{lost.host} stopped answering: waiting for your choice")
        box.open()
        try:
            decision = await answer
        finally:
            self.host_lost_question = None
        self.trial_label.setText({"wait": f"Waiting for {lost.host} to answer again…",
                                  "drop": f"Going on without {lost.host}",
                                  "stop": "Stopping and putting every change back…"}[decision])  # fmt: skip
        return decision

    def _run_done(self, task: asyncio.Task[SweepFinished]) -> None:
        self.task = None
        if task.cancelled():
            self.state.failed = "the run's task was cancelled"
        elif isinstance(task.exception(), SessionError):
            self.state.failed = str(task.exception())
            self.trial_label.setText(f"The run stopped: {self.state.failed}")
        elif (exc := task.exception()) is not None:
            self.state.failed = str(exc)
            sys.excepthook(type(exc), exc, exc.__traceback__)
        else:
            self.state.finished = task.result()
        self._set_running(False)
        self.completeChanged.emit()

    # --- events from the core ---
    @Slot(object)
    def on_sweep_started(self, ev: SweepStarted) -> None:
        self.total = ev.total
        self.progress.setMaximum(ev.total)
        self.progress.setValue(ev.resumed)

    @Slot(object)
    def on_trial_started(self, ev: TrialStarted) -> None:
        index = self.progress.value() + 1
        self.trial_label.setText(f"Trial {index} of {max(self.total, index)}: {config_text(dict(ev.config))} · "
                                 f"{ev.workload}, repetition {ev.repetition + 1}")

    @Slot(object)
    def on_trial_finished(self, ev: TrialFinished) -> None:
        self.finished_trials.append(ev)
        if ev.skipped:
            mark, figures = "skipped", "not ranked"
        elif ev.value_bps is None:
            mark, figures = "broken", ev.reason[:60]
        else:
            mark = "stable" if ev.stable else "unstable"
            figures = figure_text(ev.value_bps, ev.unit) + (f", CV {ev.cv * 100:.1f} %" if ev.cv is not None else "")
        item = QListWidgetItem(f"#{len(self.finished_trials)} {ev.workload}, {mark}\n{figures}")
        item.setToolTip(config_text(dict(ev.config)) + (f"\n{ev.reason}" if ev.reason else ""))
        good = ev.value_bps is not None and bool(ev.stable)
        icon = QStyle.StandardPixmap.SP_DialogApplyButton if good else QStyle.StandardPixmap.SP_MessageBoxWarning
        item.setIcon(self.style().standardIcon(icon))
        self.strip.addItem(item)
        self.strip.scrollToItem(item)

    @Slot(object)
    def on_progress(self, ev: Progress) -> None:
        self.total = ev.total
        self.progress.setMaximum(ev.total)
        self.progress.setValue(ev.done)
        if ev.eta_s is not None:
            self.eta_label.setText(f"about {duration(ev.eta_s)} left")

    @Slot(object)
    def on_journal(self, ev: JournalChanged) -> None:
        self.journal.setRowCount(len(ev.entries))
        for i, e in enumerate(ev.entries):
            for col, text in enumerate((e.host, self.labels.get(e.knob, e.knob), f"{e.old_value} → {e.new_value}",
                                        e.state.value)):
                item = QTableWidgetItem(text)
                item.setToolTip(e.target)
                self.journal.setItem(i, col, item)
        self.journal.scrollToBottom()

    @Slot(object)
    def on_run_finished(self, ev: SweepFinished) -> None:
        outcome = outcome_text(ev)
        if ev.problems:
            self.trial_label.setText(f"Run {outcome}, but some changes could not be put back: "
                                     + "; ".join(ev.problems))
        elif ev.paused_for:
            self.trial_label.setText(
                f"Run stopped: {ev.paused_for} stopped answering. The other hosts' changes are back; "
                f"{ev.paused_for}'s are put back by its dead-man switch. Go on later with "
                f"`nfs-tuner sweep --resume {ev.session_id}`.")
        else:
            self.trial_label.setText(f"Run {outcome}. Every change on the hosts has been put back.")
        if ev.state == SessionState.COMPLETE.value:  # the estimate gives way to the trials really run
            self.progress.setMaximum(ev.trials)
            self.progress.setValue(ev.trials)
            self.eta_label.setText("done")

    # --- the brakes ---
    @Slot()
    def toggle_pause(self) -> None:
        self.paused = not self.paused
        if self.paused:
            self.session.pause()
            self.pause_button.setText("&Resume")
        else:
            self.session.go_on()
            self.pause_button.setText("&Pause")

    @Slot()
    def ask_cancel(self) -> None:
        self.cancel_question = ask_to_revert(
            self, "cancelQuestion", "Cancel the run?",
            "Stop the run and put back every change made on the hosts?", "Cancel and &revert", self.cancel)

    def cancel(self) -> None:
        self.trial_label.setText("Cancelling and putting every change back…")
        self.cancel_button.setEnabled(False)
        spawn(self.session.cancel_and_revert())

    def _set_running(self, running: bool) -> None:
        for b in (self.pause_button, self.skip_button, self.cancel_button):
            b.setEnabled(running)

    def isComplete(self) -> bool:
        return self.task is None and self.state.finished is not None and bool(self.finished_trials)

    def validatePage(self) -> bool:
        self.state.results = self.session.results()
        return True
