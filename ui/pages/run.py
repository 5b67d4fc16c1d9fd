"""Page 4: the sweep, live: plots, finished trials, progress, the journal, and the brakes."""

from __future__ import annotations

import asyncio
import sys

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.session import SessionError
from app.session.stability import StabilityRule
from app.store import SessionState
from app.sweep.events import Decision, HostLost, JournalChanged, Progress, SweepFinished, SweepStarted, TrialFinished, TrialStarted
from app.vocabulary import knob_label, pace_note, transition_text, trial_config_text
from ui.async_tasks import spawn
from ui.focus import tab_moves_on
from ui.live_plot import LivePlots
from ui.pages.base import Page
from ui.questions import ask_to_revert
from ui.run_estimate import RunEstimate
from ui.theme import emphasize
from ui.trial_strip import TrialStrip, trial_figures, trial_mark
from ui.tooltips import plain_tip

OUTCOME_TEXT = {SessionState.COMPLETE: "complete", SessionState.CANCELLED: "cancelled and reverted",
                SessionState.INTERRUPTED: "interrupted"}  # fmt: skip


ENDED_TEXT = {SessionState.COMPLETE: "finished", SessionState.CANCELLED: "cancelled",
              SessionState.INTERRUPTED: "interrupted"}  # fmt: skip
# What pausing does (app.session.service.TuningSession.pause): the engine waits before the next trial.
PAUSED_IN_TRIAL = "Paused: this trial runs to its end, then the next waits for Resume (the hosts keep their settings)."
PAUSED_BETWEEN = "Paused between trials: nothing runs until you press Resume (the hosts keep their settings)."
PAUSED_COLOUR = "#d2a000"  # the banner's warning amber (ui.message_banner)


def _captioned(caption: str, view: QWidget, parent: QWidget) -> QWidget:
    """``view`` under its caption: a group box's frame and margins cost the plots their height."""
    pane = QWidget(parent)
    layout = QVBoxLayout(pane)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    label = QLabel(caption, pane)
    label.setWordWrap(True)
    layout.addWidget(label)
    layout.addWidget(view, 1)
    return pane


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
        self.in_trial = False  # between TrialStarted and TrialFinished
        self.total = 0

        self.progress = QProgressBar(self)
        self.progress.setFormat("%v of %m trials")
        self.trial_label = QLabel("Starting…", self)
        self.trial_label.setObjectName("trialLabel")
        self.trial_label.setWordWrap(True)
        self.eta_label = QLabel(self)
        self.eta_label.setObjectName("etaLabel")
        self.estimate = RunEstimate(self.eta_label)
        self.paused_banner = QLabel(self)
        self.paused_banner.setObjectName("pausedBanner")
        self.paused_banner.setWordWrap(True)
        self.paused_banner.setMargin(6)
        emphasize(self.paused_banner)
        tint = QColor(PAUSED_COLOUR)
        tint.setAlpha(60)
        banner_palette = self.paused_banner.palette()
        banner_palette.setColor(QPalette.ColorRole.Window, tint)
        self.paused_banner.setPalette(banner_palette)
        self.paused_banner.setAutoFillBackground(True)
        self.paused_banner.hide()
        self.pause_button = QPushButton("&Pause", self)
        self.pause_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPause))
        self.pause_button.clicked.connect(self.toggle_pause)
        self.skip_button = QPushButton("S&kip trial", self)
        self.skip_button.clicked.connect(self.session.skip_trial)
        self.cancel_button = QPushButton("&Cancel and revert", self)
        self.cancel_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_DialogCancelButton))
        self.cancel_button.clicked.connect(self.ask_cancel)
        self.back_button = QPushButton("Back to P&lan", self)
        self.back_button.setObjectName("backToPlan")
        self.back_button.setToolTip("Change the plan and run again: every change of this run is already put back")
        self.back_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_ArrowBack))
        self.back_button.clicked.connect(self.back_to_plan)
        self.back_button.hide()
        self.cancel_question: QMessageBox | None = None
        self.host_lost_question: QMessageBox | None = None

        self.plots = LivePlots(self.bridge.live, self)
        self.bridge.tick.connect(self.plots.refresh)

        self.strip = TrialStrip(self)

        self.journal = QTableWidget(0, 4, self)
        self.journal.setObjectName("journalTable")
        self.journal.setHorizontalHeaderLabels(("Host", "Change", "From → to", "State"))
        self.journal.verticalHeader().hide()
        self.journal.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        tab_moves_on(self.journal)
        self.journal.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.journal.setAccessibleName("Journal of changes on the hosts")

        top = QHBoxLayout()
        top.addWidget(self.progress, 2)
        top.addWidget(self.eta_label)
        top.addWidget(self.pause_button)
        top.addWidget(self.skip_button)
        top.addWidget(self.cancel_button)
        top.addWidget(self.back_button)
        below = QSplitter(Qt.Orientation.Horizontal, self)  # side by side: the plots keep the height
        below.addWidget(_captioned("Finished trials", self.strip, self))
        below.addWidget(_captioned("Journal of changes on the hosts (all put back at the end)", self.journal, self))
        below.setStretchFactor(1, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.plots)
        split.addWidget(below)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([440, 150])
        layout = self.body_layout()
        layout.addLayout(top)
        layout.addWidget(self.paused_banner)
        layout.addWidget(self.trial_label)
        layout.addWidget(split, 1)

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
        self.finished_trials.clear()
        self.strip.clear()
        self.journal.setRowCount(0)
        self.trial_label.setText("Starting…")
        self.bridge.live.reset(None)  # an earlier run's last trial must not show (Back to Plan, then again)
        self.plots.trial.set_rule(StabilityRule.of(self.state.spec))
        self.state.finished, self.state.failed = None, ""
        self._show_paused(False)
        self.estimate.note = pace_note(self.session.speed)  # the demo's clock says so
        self.estimate.rebase(est.seconds / self.session.speed)  # counted down on this clock, the demo's too
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
        drop = box.addButton(f"&Go on without {lost.host}", QMessageBox.ButtonRole.ActionRole) \
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
        if self.state.finished is None:  # no SweepFinished will say how it ended
            self.estimate.finish("stopped")
            self.plots.trial.hold_readout("The run stopped")
        self._show_paused(False)
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
        self.in_trial = True
        index = self.progress.value() + 1
        self.trial_label.setText(f"Trial {index} of {max(self.total, index)}: "
                                 f"{trial_config_text(dict(ev.config), ev.step)} · {ev.workload}"
                                 + ("" if ev.step else f", repetition {ev.repetition + 1}"))  # a study's steps run once

    @Slot(object)
    def on_trial_finished(self, ev: TrialFinished) -> None:
        self.in_trial = False
        self.finished_trials.append(ev)
        self.strip.add(ev)
        # the readout says what the tile says, not the last live check of a trial that is over
        self.plots.trial.hold_readout(f"trial #{len(self.finished_trials)} {trial_mark(ev)}: {trial_figures(ev)}")
        if self.paused:
            self.paused_banner.setText(PAUSED_BETWEEN)

    @Slot(object)
    def on_progress(self, ev: Progress) -> None:
        self.total = ev.total
        self.progress.setMaximum(ev.total)
        self.progress.setValue(ev.done)
        if ev.eta_s is not None and self.task is not None:
            self.estimate.rebase(ev.eta_s)

    @Slot(object)
    def on_journal(self, ev: JournalChanged) -> None:
        self.journal.setRowCount(len(ev.entries))
        for i, e in enumerate(ev.entries):
            for col, text in enumerate((e.host, knob_label(e.knob), transition_text(e.knob, e.old_value, e.new_value),
                                        e.state.value)):
                item = QTableWidgetItem(text)
                item.setToolTip(plain_tip(e.target))
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
                f"`{self.session.resume_command(ev.session_id)}`.")
        else:
            self.trial_label.setText(f"Run {outcome}. Every change on the hosts has been put back.")
        if ev.state == SessionState.COMPLETE.value:  # the estimate gives way to the trials really run
            self.progress.setMaximum(ev.trials)
            self.progress.setValue(ev.trials)
        ended = ENDED_TEXT.get(SessionState(ev.state), ev.state)
        self.estimate.finish(ended)
        last = self.finished_trials[-1] if self.finished_trials else None
        self.plots.trial.hold_readout(f"Run {ended}" + (f"; last trial {trial_mark(last)}: {trial_figures(last)}"
                                                        if last is not None else ""))  # fmt: skip

    # --- the brakes ---
    @Slot()
    def toggle_pause(self) -> None:
        if self.paused:
            self.session.go_on()
        else:
            self.session.pause()
        self._show_paused(not self.paused)

    def _show_paused(self, paused: bool) -> None:
        """Paused shows: a banner that says what goes on, Resume, a greyed bar, a stopped clock."""
        was, self.paused = self.paused, paused
        self.pause_button.setText("&Resume" if paused else "&Pause")
        self.pause_button.setIcon(self.style().standardIcon(
            QStyle.StandardPixmap.SP_MediaPlay if paused else QStyle.StandardPixmap.SP_MediaPause))
        self.paused_banner.setText(PAUSED_IN_TRIAL if self.in_trial else PAUSED_BETWEEN)
        self.paused_banner.setVisible(paused)
        bar = QPalette()  # only the roles set here: the rest follows the window's palette (dark mode at run time)
        if paused:
            bar.setColor(QPalette.ColorRole.Highlight, self.palette().color(QPalette.ColorRole.Mid))
        self.progress.setPalette(bar)
        self.progress.setFormat("%v of %m trials · paused" if paused else "%v of %m trials")
        if paused and not was:
            self.estimate.pause()
        elif was and not paused:
            self.estimate.resume()

    @Slot()
    def ask_cancel(self) -> None:
        self.cancel_question = ask_to_revert(
            self, "cancelQuestion", "Cancel the run?",
            "Stop the run and put back every change made on the hosts?", "Cancel and &revert", self.cancel)

    def cancel(self) -> None:
        self.trial_label.setText("Cancelling and putting every change back…")
        self.cancel_button.setEnabled(False)
        self._show_paused(False)  # the engine goes on to its revert
        self.estimate.finish("cancelling…")
        spawn(self.session.cancel_and_revert())

    def _set_running(self, running: bool) -> None:
        for b in (self.pause_button, self.skip_button, self.cancel_button):
            b.setEnabled(running)
        self.back_button.setVisible(not running)

    @Slot()
    def back_to_plan(self) -> None:
        """To the Plan page as the admin left it, to change it and run again. The wizard's own Back
        stays off after the commit (a run changes hosts); this one shows only once the run is
        over and every change is back, when a new run in this session is as safe as the first."""
        if self.task is not None or self.session.running:
            return
        self.back_button.hide()
        self.wizard().back()

    def isComplete(self) -> bool:
        return self.task is None and self.state.finished is not None and bool(self.finished_trials)

    def validatePage(self) -> bool:
        self.state.results = self.session.results()
        return True
