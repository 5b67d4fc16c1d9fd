"""Page 3: which knobs to sweep over which values, on which workloads, how often; or a study.

It opens on the plan the diagnosis proposes (app.session.proposal): what limits the hosts
today above the knobs, each knob ticked or not with its values and its reason beside it,
the workloads of what the server is for, fitted to the time budget. The admin may change
all of it; the reasons stay. A knob whose target the hosts lack is not offered, and a plan
that fits no budget cannot be started (its reason is said where the errors are).

A study (a load ladder, directory scaling: ui.pages.plan_study) holds each checked knob at
one value instead, and has no strategy, repetitions or goal. The commit button only asks:
first the hosts are checked (app.session.preflight: space, python3, the ceiling test's port,
write access, what each knob needs), then the run starts from the confirmation
(ui.run_confirmation), which lists what the run changes on each host, and only on its
explicit "Start run"."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass

from PySide6.QtCore import QRect, Qt, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
    QWizard,
)

from app.knobs.model import Safety
from app.session import (
    STRATEGY_TEXT,
    strategy_label,
    WORKLOADS,
    GoalKind,
    KnobChoice,
    PlanChoices,
    PlanError,
    SessionError,
)
from app.session.budget import DEFAULT_BUDGET_S, budget_text, fit_text, parse_budget
from app.session.choices import DEFAULT_BASELINE_WORKLOADS
from app.session.proposal import Proposal
from app.session.study import PLANNED_CREATES_PER_S, STUDY_HELP, StudyKind, as_study
from app.session.uses import USES, use_label, use_of
from app.vocabulary import DURATION_FORM, GOAL_TITLES, bounds_text, knob_label, planned_text
from app.sweep.spec import LOOPING, SweepSpec
from ui.async_tasks import spawn
from ui.focus import tab_moves_on
from ui.pages.base import Page
from ui.pages.plan_study import StudyFields
from ui.run_confirmation import RunConfirmation
from ui.table_fit import PADDING_CHARS, ColumnFit
from ui.theme import ERROR_COLOUR, SAFETY_COLOURS, buddy_label, emphasize

COLUMNS = ("Sweep", "Knob", "Where", "Today", "Values to try", "Allowed", "Safety")
BY_HAND = "workloads chosen by hand"  # the use box when the workloads are no use's
LEFT_OUT = "left out to fit the time budget; "  # before the reason of a knob a budget dropped
STUDY_COLUMNS = {0: "Hold", 4: "Value to hold"}  # a study's words for the columns that differ
STUDY_SUBTITLE = ("{help} Unchecked knobs stay at the hosts' own settings; a checked one is held at one value "
                  "for the whole study. Every change is put back after.")
CHECKING = "Checking the hosts before anything is changed…"
NOT_CLEAR = "Nothing was changed. Checked before the run, this stands in its way:"
LADDER_WORKLOAD = "rand_read"  # the ladder's workload when none of the sweep's can climb (as the command line's)
ASYNC_WARNING = (
    "<p><b>async exports are fast because the server acknowledges writes before they are on disk.</b></p>"
    "<p>If the server crashes or loses power, data the clients were told is safe can be lost or "
    "corrupted, silently.</p><p>nfs-tuner will measure async only if you agree, and will never "
    "recommend it without this warning. Include async in the sweep?</p>"
)
RESTART_WARNING = (
    "<p><b>nfsd takes a new max_block_size only while it is stopped.</b></p>"
    "<p>Each change stops nfsd and starts it again with its threads and listeners as they were. Every "
    "NFSv4 client of this server, not only nfs-tuner's, then waits out the grace period (nfsv4gracetime, "
    "90 s by default) before it can open files; NFSv3 clients reclaim their locks.</p><p>Run this on a "
    "server that is not yet in service, or in a quiet hour. Allow restarts in the sweep?</p>"
)


@dataclass(frozen=True)
class OptInText:
    """The words of one opt-in (app.session.choices.OPT_INS): its check box and its warning."""

    box: str
    name: str  # the box's object name; the warning's is "<kind>Warning"
    title: str
    warning: str
    yes: str


OPT_IN_TEXT = {
    "async": OptInText("Also try &async exports (unsafe: may lose data on a server crash)", "asyncOptIn",
                       "async exports can lose data", ASYNC_WARNING, "&Include async, I understand"),
    "restart": OptInText("Also try nfsd's max_block_si&ze (restarts nfsd: NFSv4 clients pause)", "restartOptIn",
                         "max_block_size restarts nfsd", RESTART_WARNING, "&Allow restarts, I understand"),
}  # fmt: skip


SAFETY_TEXT = {
    Safety.SAFE: "safe at run time",
    Safety.MEMORY: "costs memory on the host",
    Safety.SERVICE: "a wrong value starves a service",
    Safety.CONNECTIVITY: "may cut the connection",
    Safety.COHERENCE: "clients may see stale files",
    Safety.DATA_RISK: "may lose data on a crash",
    Safety.RESTART: "restarts nfsd: clients pause",
}


def allowed_text(knob: KnobChoice) -> str:
    v = knob.spec.validity
    return v.describe() + (f" {knob.spec.unit}" if knob.spec.unit and not v.choices else "")


def allowed_cell(knob: KnobChoice) -> str:
    """What the table's Allowed cell says: a list of more than four choices by its two first and its
    last ('4096, 8192, …, 1048576'); the cell's tooltip and the field's have them all."""
    choices = knob.spec.validity.choices
    if len(choices) <= 4:
        return allowed_text(knob)
    return f"{choices[0]}, {choices[1]}, …, {choices[-1]}"


def safety_text(knob: KnobChoice) -> str:
    """The knob's safety class (where it acts is the Where column's: the catalog's scope)."""
    return ("⚠ " if knob.needs_opt_in else "") + SAFETY_TEXT[knob.spec.safety]


def _centred(widget: QWidget, parent: QWidget) -> QWidget:
    holder = QWidget(parent)
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(widget, 0, Qt.AlignmentFlag.AlignVCenter)
    return holder


def knob_row(index: int) -> int:
    """The table row of the ``index``-th knob; the row under it holds its reason across the table."""
    return 2 * index


class ValuesFit(ColumnFit):
    """The knobs' columns inside the table's width: a long knob name, where it acts, its allowed values
    and its safety class wrap; the values fields get the room left and ask for their text's width (a line
    edit's own wish is some 17 characters, whatever it holds), and give some of it up last. A knob's reason spans the row under it,
    wrapped at the table's width (a row's own fit would wrap it at its first column's)."""

    VALUES = COLUMNS.index("Values to try")

    def __init__(self, table: QTableWidget, edits: dict[str, QLineEdit]) -> None:
        super().__init__(table, narrow=(COLUMNS.index("Knob"), COLUMNS.index("Where"), COLUMNS.index("Allowed"),
                                        COLUMNS.index("Safety"), self.VALUES),
                         spare=self.VALUES)
        self.edits = edits
        for edit in edits.values():
            edit.textChanged.connect(self.refit)

    def natural_width(self, column: int) -> int:
        fm = self.table.fontMetrics()
        if column == 0:  # the check boxes: the reasons that start in it span the table
            boxes = (w.sizeHint().width() for r in range(0, self.table.rowCount(), 2)
                     if (w := self.table.cellWidget(r, 0)) is not None)  # fmt: skip
            return max((*boxes, self.table.horizontalHeader().sectionSizeHint(0)))
        if column != self.VALUES:
            return super().natural_width(column)
        return max((fm.horizontalAdvance(e.text()) for e in self.edits.values()), default=0) + 4 * fm.averageCharWidth()

    def narrowest(self, column: int) -> int:
        if column == self.VALUES:  # a values field scrolls its own text: some 12 characters stay in view
            return max(12 * self.table.fontMetrics().averageCharWidth(), self.table.horizontalHeader().sectionSizeHint(column))
        return super().narrowest(column)

    def fit(self) -> None:
        super().fit()
        fm, table = self.table.fontMetrics(), self.table
        room = QRect(0, 0, max(1, table.viewport().width() - PADDING_CHARS * fm.averageCharWidth()), 1 << 20)
        for r in range(1, table.rowCount(), 2):
            item = table.item(r, 0)
            text = item.text() if item is not None else ""
            lines = fm.boundingRect(room, int(Qt.TextFlag.TextWordWrap), text).height() if text else 0
            table.setRowHeight(r, lines + fm.descent() + 2 if text else 0)
        table.updateGeometries()


def _number(text: str) -> float | None:
    """A typed number; None when empty, nan when not a number (the goal's check then says what is wrong)."""
    try:
        return float(text) if text.strip() else None
    except ValueError:
        return math.nan


class PlanPage(Page):
    TITLE = "Plan"
    SUBTITLE = "Choose the knobs and the values to try. Each trial changes them on the hosts and puts them back after."

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.knobs = self.session.knobs()
        self.errors: dict[str, str] = {}
        self.warnings: dict[str, QMessageBox] = {}  # opt-in kind -> its warning, once asked
        self.confirmation: RunConfirmation | None = None
        self.checking: asyncio.Task[None] | None = None  # the pre-flight check before the confirmation
        self._confirmed: SweepSpec | None = None  # what the admin agreed to run in the confirmation
        self._kind = StudyKind.SWEEP  # the kind the table and fields are set up for
        self._sweep_checks: dict[str, bool] = {}  # the sweep's knobs, values and workloads, kept while a study is chosen
        self._sweep_values: dict[str, str] = {}
        self._sweep_workloads: list[bool] = []
        self.proposal: Proposal | None = None  # the diagnosis's plan the page last set out
        self._budget_problem = ""
        self.setCommitPage(True)  # after this the run changes hosts: no going back
        self.setButtonText(QWizard.WizardButton.CommitButton, "Start &run…")  # asks first; &S is the Sessions menu's

        self.table = QTableWidget(2 * len(self.knobs), len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAccessibleName("Knobs to sweep")
        tab_moves_on(self.table)  # Tab goes from check box to values field, not cell by cell
        self.checks: dict[str, QCheckBox] = {}
        self.edits: dict[str, QLineEdit] = {}
        for index, knob in enumerate(self.knobs):
            row = knob_row(index)
            title = knob.spec.title
            check = QCheckBox(self.table)
            check.setAccessibleName(f"Sweep {title}")
            check.setChecked(knob.on_by_default)
            edit = QLineEdit(knob.suggested, self.table)
            edit.setAccessibleName(f"Values of {title}")
            edit.setToolTip(f"{knob.spec.safety_note} {knob.spec.validity.reason}.\n"
                            f"Comma-separated; allowed: {allowed_text(knob)}")
            check.toggled.connect(self._changed)
            edit.textChanged.connect(self._changed)
            self.checks[knob.name], self.edits[knob.name] = check, edit
            holder = QWidget(self.table)
            hl = QHBoxLayout(holder)
            hl.setContentsMargins(6, 0, 0, 0)
            hl.addWidget(check)
            self.table.setCellWidget(row, 0, holder)
            name_item = QTableWidgetItem(knob_label(knob.name))
            name_item.setToolTip(f"{knob.name}: {knob.spec.safety_note}")
            self.table.setItem(row, 1, name_item)
            self.table.setItem(row, 2, QTableWidgetItem(knob.spec.scope.value))
            self.table.setItem(row, 3, QTableWidgetItem(knob.current))
            self.table.setCellWidget(row, 4, _centred(edit, self.table))  # a row grown by wrapped text keeps it one line high
            allowed = QTableWidgetItem(allowed_cell(knob))
            allowed.setToolTip(allowed_text(knob))
            self.table.setItem(row, 5, allowed)
            safety = QTableWidgetItem(safety_text(knob))
            safety.setForeground(QColor(SAFETY_COLOURS[knob.spec.safety]))
            self.table.setItem(row, 6, safety)
            why = QTableWidgetItem("")
            why.setFlags(Qt.ItemFlag.ItemIsEnabled)
            italic = why.font()
            italic.setItalic(True)
            why.setFont(italic)
            self.table.setItem(row + 1, 0, why)
            self.table.setSpan(row + 1, 0, 1, len(COLUMNS))
            if knob.needs_opt_in:
                check.setChecked(False)
                check.setEnabled(False)
                edit.setEnabled(False)
        self.table_fit = ValuesFit(self.table, self.edits)

        self.opt_in_boxes: dict[str, QCheckBox] = {}
        for kind, words in OPT_IN_TEXT.items():
            box = self.opt_in_boxes[kind] = QCheckBox(words.box, self)
            box.setObjectName(words.name)
            box.clicked.connect(lambda checked, kind=kind: self._opt_in_clicked(kind, checked))
        self.error_label = QLabel(self)
        self.error_label.setObjectName("planErrors")
        self.error_label.setWordWrap(True)
        pal = self.error_label.palette()
        pal.setColor(pal.ColorRole.WindowText, QColor(ERROR_COLOUR))
        self.error_label.setPalette(pal)

        self.workload_list = QListWidget(self)
        self.workload_list.setAccessibleName("Workloads")
        for w in WORKLOADS:
            item = QListWidgetItem(w.label, self.workload_list)
            item.setData(Qt.ItemDataRole.UserRole, w.kind)
            item.setToolTip(w.description)
            item.setCheckState(Qt.CheckState.Unchecked)
        self.workload_list.itemChanged.connect(self._workloads_changed)
        defaults = self.session.plan_defaults
        self.strategy_box = QComboBox(self)
        self.strategy_box.setAccessibleName("Strategy")  # a combo box is read out by its text, not its label
        for key in STRATEGY_TEXT:
            self.strategy_box.addItem(strategy_label(key), key)
        self.strategy_box.setCurrentIndex(self.strategy_box.findData(defaults.strategy))
        self.strategy_box.currentIndexChanged.connect(self._changed)
        self.reps = QSpinBox(self)
        self.reps.setRange(1, 10)
        self.reps.setValue(defaults.repetitions)
        self.reps.setToolTip("Each configuration runs at least this many times, and up to three times as many while "
                             "its runs disagree; the ranking uses the mean and its 95 % CI.")
        self.reps.valueChanged.connect(self._changed)
        self.goal_box = QComboBox(self)
        self.goal_box.setAccessibleName("Goal")
        for key, title in GOAL_TITLES.items():
            self.goal_box.addItem(title, key)
        self.goal_box.setCurrentIndex(self.goal_box.findData(defaults.goal))
        self.goal_box.setToolTip("What the recommendation optimises. Latency is the p99 of every operation of "
                                 "every client, from their merged histograms.")
        self.goal_box.currentIndexChanged.connect(self._goal_changed)
        self.p99_edit = self._goal_field("p99Limit", "p99 limit in milliseconds", "e.g. 5",
                                         "Configurations whose p99 exceeds this many milliseconds are left out of "
                                         "the choice; when none stays under it, nothing is recommended.")
        self.load_edit = self._goal_field("loadIops", "Load in operations per second per client", "the plan's own load",
                                          "Each client's workload is held to this many operations per second, so "
                                          "every configuration serves the same load; empty: its jobs on every "
                                          "client, unthrottled.")  # fmt: skip
        self.estimate = QLabel(self)
        self.estimate.setObjectName("estimateLabel")
        self.estimate.setWordWrap(True)  # the demo says both clocks, and what fitting the budget did
        emphasize(self.estimate)
        self.diagnosis_label = QLabel(self)
        self.diagnosis_label.setObjectName("diagnosisLabel")
        self.diagnosis_label.setWordWrap(True)
        self.use_box = QComboBox(self)
        self.use_box.setObjectName("useBox")
        self.use_box.setAccessibleName("What the server is for")
        for name, use in USES.items():
            self.use_box.addItem(use.title, name)
            self.use_box.setItemData(self.use_box.count() - 1, use_label(name), Qt.ItemDataRole.ToolTipRole)
        self.use_box.addItem(BY_HAND, "")
        self.use_box.setToolTip("Sets the workloads and proposes the knobs for them again, each with its reason.")
        self.use_box.activated.connect(self._use_chosen)
        self.budget_edit = QLineEdit(budget_text(DEFAULT_BUDGET_S), self)
        self.budget_edit.setObjectName("budgetEdit")
        self.budget_edit.setAccessibleName("Time budget")
        self.budget_edit.setPlaceholderText("no limit")
        self.budget_edit.setToolTip(f"The time the plan may take, in {DURATION_FORM}; empty: no limit. To fit, trials "
                                    "measure less and run fewer times first, then the lowest-priority knobs are left "
                                    "out, each said.")  # fmt: skip
        self.budget_edit.textChanged.connect(self._changed)
        self.study_fields = StudyFields(self)

        side = QWidget(self)
        form = QFormLayout(side)
        form.setContentsMargins(0, 0, 0, 0)
        # Labels above their fields, and fields as narrow as a few words (their lists show each
        # choice whole): beside the labels, the longest choice set the column's width, and on a
        # 960-pixel screen the knobs' table scrolled sideways.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        for combo in (self.strategy_box, self.goal_box):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(16)
        self.workload_list.setMinimumHeight(3 * self.workload_list.fontMetrics().lineSpacing()
                                            + 2 * self.workload_list.frameWidth())  # fmt: skip
        wl_box = QGroupBox("&Workloads", self)
        wl_layout = QVBoxLayout(wl_box)
        wl_layout.addWidget(buddy_label("What the server is &for:", self.use_box, self))
        wl_layout.addWidget(self.use_box)
        wl_layout.addWidget(self.workload_list)
        form.addRow(wl_box)
        form.addRow(buddy_label("T&ime budget:", self.budget_edit, self), self.budget_edit)
        form.addRow(buddy_label("S&trategy:", self.strategy_box, self), self.strategy_box)
        form.addRow(buddy_label("Re&petitions:", self.reps, self), self.reps)  # &R is Start run's
        form.addRow(buddy_label("&Goal:", self.goal_box, self), self.goal_box)
        form.addRow(buddy_label("p99 li&mit (ms):", self.p99_edit, self), self.p99_edit)
        form.addRow(buddy_label("Loa&d (ops/s per client):", self.load_edit, self), self.load_edit)
        form.addRow(self.estimate)
        knobs = QWidget(self)
        knobs_col = QVBoxLayout(knobs)
        knobs_col.setContentsMargins(0, 0, 0, 0)
        knobs_col.addWidget(self.study_fields)
        knobs_col.addWidget(self.diagnosis_label)
        knobs_col.addWidget(self.table, 1)
        for box in self.opt_in_boxes.values():
            knobs_col.addWidget(box)
        knobs_col.addWidget(self.error_label)
        body = QSplitter(Qt.Orientation.Horizontal, self)  # the table gets the width, never the fields' wishes
        body.addWidget(knobs)
        body.addWidget(side)
        body.setStretchFactor(0, 7)  # the fields a share of any width: at 1280 pixels a strategy's
        body.setStretchFactor(1, 3)  # whole name shows, at 960 the knobs' columns still fit
        body.setSizes([700, 300])
        layout = self.body_layout()
        layout.addWidget(body)
        self.form = form
        self.sweep_only: tuple[QWidget, ...] = (self.strategy_box, self.reps, self.goal_box, self.p99_edit,
                                                self.load_edit, self.budget_edit)  # fields a study has none of
        self._goal_changed()
        self.study_fields.changed.connect(self._study_changed)

    def initializePage(self) -> None:
        # today's values are known once the hosts are connected
        for index, knob in enumerate(self.session.knobs()):
            self.knobs[index] = knob
            self.table.setItem(knob_row(index), 3, QTableWidgetItem(knob.current))
        measured = set(self.state.baseline.today) if self.state.baseline else set()
        measured = measured or set(DEFAULT_BASELINE_WORKLOADS)
        self.workload_list.blockSignals(True)
        for i in range(self.workload_list.count()):
            item = self.workload_list.item(i)
            checked = item.data(Qt.ItemDataRole.UserRole) in measured
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self.workload_list.blockSignals(False)
        self._show_use()
        self._propose(tick=True)  # what the baseline just found
        if self._kind is not StudyKind.SWEEP:  # the baseline just measured is what the sweep comes back to
            self._sweep_workloads = [k in measured for k in self._workload_kinds()]
        if self._kind is StudyKind.LADDER:
            self._one_climbing_workload()
        elif self._kind is StudyKind.DIRS:
            self._set_workloads([k == "dir_scaling" for k in self._workload_kinds()])
        self._changed()

    # --- the opt-ins: async exports, nfsd restarts ---
    @property
    def async_box(self) -> QCheckBox:
        return self.opt_in_boxes["async"]

    @property
    def async_warning(self) -> QMessageBox | None:
        return self.warnings.get("async")

    def _opt_in_clicked(self, kind: str, checked: bool) -> None:
        if not checked:
            self._set_opt_in(kind, False)
            return
        self.opt_in_boxes[kind].setChecked(False)  # only a "Yes" in the warning turns it on
        text = OPT_IN_TEXT[kind]
        box = QMessageBox(QMessageBox.Icon.Warning, text.title, text.warning,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)  # fmt: skip
        box.setObjectName(f"{kind}Warning")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.button(QMessageBox.StandardButton.Yes).setText(text.yes)
        box.finished.connect(lambda _r: self._set_opt_in(kind, box.clickedButton() is box.button(QMessageBox.StandardButton.Yes)))
        self.warnings[kind] = box
        box.open()

    def _set_opt_in(self, kind: str, on: bool) -> None:
        """A yes enables the opt-in's knobs: a sweep tries them at once; a study holds one only when checked
        (the sweep, chosen again, tries them)."""
        self.opt_in_boxes[kind].setChecked(on)
        sweep = self._kind is StudyKind.SWEEP
        for knob in self.knobs:
            if knob.opt_in == kind and self._offered(knob.name):
                self.checks[knob.name].setEnabled(on)
                self.checks[knob.name].setChecked(on and sweep and knob.tried_on_opt_in)
                self.edits[knob.name].setEnabled(on)
                if not sweep:
                    self._sweep_checks[knob.name] = on and knob.tried_on_opt_in
        if self.proposal is not None:  # its reasons say what the opt-in changes
            self._propose(tick=False)
        self._changed()

    # --- the proposal: the diagnosis's plan, its reasons beside the knobs ---
    def _offered(self, knob: str) -> bool:
        return self.proposal is None or self.proposal.advice(knob).offered

    def _propose(self, tick: bool) -> None:
        """The diagnosis for the checked workloads: its reasons beside the knobs, and with ``tick`` its
        ticks and values (into the sweep's, kept aside while a study is chosen)."""
        self.proposal = self.session.proposal(self._checked_workloads() or DEFAULT_BASELINE_WORKLOADS,
                                              allow_async=self.async_box.isChecked(),
                                              allow_restart=self.opt_in_boxes["restart"].isChecked())  # fmt: skip
        diagnosis = self.proposal.diagnosis
        self.diagnosis_label.setText("\n".join(line for line in (diagnosis.headline, diagnosis.summary) if line))
        self.diagnosis_label.setToolTip("\n".join(f"{f.subject}: {f.text}" for f in diagnosis.findings))
        sweep = self._kind is StudyKind.SWEEP
        for knob in self.knobs:
            advice = self.proposal.advice(knob.name)
            check, edit = self.checks[knob.name], self.edits[knob.name]
            usable = advice.offered and (knob.opt_in is None or self.opt_in_boxes[knob.opt_in].isChecked())
            check.setEnabled(usable)
            edit.setEnabled(usable)
            if not tick:
                continue
            values = advice.values_text if advice.values else edit.text()
            if sweep:
                for widget in (check, edit):
                    widget.blockSignals(True)
                check.setChecked(usable and advice.ticked)
                edit.setText(values)
                for widget in (check, edit):
                    widget.blockSignals(False)
            else:
                self._sweep_checks[knob.name] = usable and advice.ticked
                self._sweep_values[knob.name] = values
                check.setChecked(check.isChecked() and usable)
        if tick:
            self._order_rows()
        self._show_reasons(())

    def _order_rows(self) -> None:
        """The knobs shown in the proposal's order, the ticked first by priority (each with its reason
        under it), and the keyboard's order with them."""
        if self.proposal is None:
            return
        header = self.table.verticalHeader()
        index_of = {k.name: i for i, k in enumerate(self.knobs)}
        rows = [r for a in self.proposal.knobs for r in (knob_row(index_of[a.knob]), knob_row(index_of[a.knob]) + 1)]
        for visual, row in enumerate(rows):
            header.moveSection(header.visualIndex(row), visual)
        widgets = [w for a in self.proposal.knobs for w in (self.checks[a.knob], self.edits[a.knob])]
        for first, second in zip(widgets, widgets[1:], strict=False):
            QWidget.setTabOrder(first, second)

    def _show_reasons(self, left_out: tuple[str, ...]) -> None:
        if self.proposal is None:
            return
        for index, knob in enumerate(self.knobs):
            why = (LEFT_OUT if knob.name in left_out else "") + self.proposal.advice(knob.name).reason
            item = self.table.item(knob_row(index) + 1, 0)
            if item is not None and item.text() != why:
                item.setText(why)
                item.setToolTip(why)

    def _show_use(self) -> None:
        """The use whose workloads are the checked ones, else "chosen by hand"."""
        name = use_of(self._checked_workloads()) or ""
        self.use_box.setCurrentIndex(self.use_box.findData(name))

    @Slot(int)
    def _use_chosen(self, index: int) -> None:
        name = self.use_box.itemData(index)
        if not name or self._kind is not StudyKind.SWEEP:
            return
        self._set_workloads([k in USES[name].workloads for k in self._workload_kinds()])
        self._propose(tick=True)
        self._changed()

    @Slot()
    def _workloads_changed(self, *_args: object) -> None:
        """Workloads chosen one by one: the reasons follow them; the ticks stay the admin's."""
        self._show_use()
        if self.proposal is not None:
            self._propose(tick=False)
        self._changed()

    def _budget(self) -> float | None:
        try:
            budget = parse_budget(self.budget_edit.text())
        except ValueError as exc:
            self._budget_problem = str(exc)
            return None
        self._budget_problem = ""
        return budget

    # --- the plan and its checks: the core's (app.session.plan), in the CLI's words ---
    def choices(self) -> PlanChoices:
        order = [a.knob for a in self.proposal.knobs] if self.proposal is not None else [k.name for k in self.knobs]
        knobs = {name: self.edits[name].text() for name in order if self.checks[name].isChecked()}  # by priority
        workloads = self._checked_workloads()
        opt_ins = {"allow_async": self.async_box.isChecked(), "allow_restart": self.opt_in_boxes["restart"].isChecked()}
        if self._kind is not StudyKind.SWEEP:  # the study's own rules, as `nfs-tuner study` takes them
            return as_study(self.session.choices(knobs=knobs, workloads=workloads, **opt_ins), self._kind)
        goal = str(self.goal_box.currentData())
        return self.session.choices(knobs=knobs, workloads=workloads, strategy=self.strategy_box.currentData(),
                                    repetitions=self.reps.value(), **opt_ins, goal=goal, budget_s=self._budget(),
                                    p99_max_ms=_number(self.p99_edit.text()) if goal == GoalKind.P99_CAP else None,
                                    load_iops=_number(self.load_edit.text()) if goal == GoalKind.LOWEST_P99 else None)  # fmt: skip

    def _workload_kinds(self) -> list[str]:
        return [str(self.workload_list.item(i).data(Qt.ItemDataRole.UserRole)) for i in range(self.workload_list.count())]

    def _checked_workloads(self) -> tuple[str, ...]:
        return tuple(kind for i, kind in enumerate(self._workload_kinds())
                     if self.workload_list.item(i).checkState() == Qt.CheckState.Checked)  # fmt: skip

    def _set_workloads(self, checked: list[bool]) -> None:
        self.workload_list.blockSignals(True)
        for i, on in enumerate(checked):
            self.workload_list.item(i).setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self.workload_list.blockSignals(False)

    def _one_climbing_workload(self) -> None:
        """A ladder's one workload: the first checked one that can climb (has streams), else the default."""
        kinds = self._workload_kinds()
        climbing = [k for k in self._checked_workloads() if k in LOOPING] or [LADDER_WORKLOAD]
        self._set_workloads([k == climbing[0] for k in kinds])

    # --- a sweep or a study: the table's words, the sweep-only fields, what is checked ---
    @Slot()
    def _study_changed(self) -> None:
        kind = self.study_fields.kind
        if kind is not self._kind:
            self._switch_kind(self._kind, kind)
            self._kind = kind
        self._changed()

    def _switch_kind(self, was: StudyKind, kind: StudyKind) -> None:
        """A study starts from the hosts' own settings (no knob checked); the sweep's checks, values and
        workloads come back as they were when it is chosen again. From one study to another the held knobs stay."""
        study = kind is not StudyKind.SWEEP
        if was is StudyKind.SWEEP:
            self._sweep_checks = {name: check.isChecked() for name, check in self.checks.items()}
            self._sweep_values = {name: edit.text() for name, edit in self.edits.items()}
            checked = self._checked_workloads()
            self._sweep_workloads = [k in checked for k in self._workload_kinds()]
        if not study or was is StudyKind.SWEEP:
            for name, check in self.checks.items():
                check.blockSignals(True)
                check.setChecked(not study and self._sweep_checks.get(name, False) and check.isEnabled())
                check.blockSignals(False)
        if not study:
            for name, text in self._sweep_values.items():
                self.edits[name].blockSignals(True)
                self.edits[name].setText(text)
                self.edits[name].blockSignals(False)
            if self._sweep_workloads:
                self._set_workloads(self._sweep_workloads)
        elif kind is StudyKind.LADDER:
            self._one_climbing_workload()
        else:  # a directory study's workload is its own, shown checked and fixed
            self._set_workloads([k == "dir_scaling" for k in self._workload_kinds()])
        self.workload_list.setEnabled(kind is not StudyKind.DIRS)
        self.use_box.setEnabled(not study)  # a use sets a sweep's workloads; a study has its own
        for field in self.sweep_only:
            self.form.setRowVisible(field, not study)
        self.table.setHorizontalHeaderLabels([STUDY_COLUMNS.get(c, w) if study else w for c, w in enumerate(COLUMNS)])
        self.table.setAccessibleName("Knobs to hold" if study else "Knobs to sweep")
        for knob in self.knobs:
            self.checks[knob.name].setAccessibleName(f"{'Hold' if study else 'Sweep'} {knob.spec.title}")
        self.header.subtitle.setText(STUDY_SUBTITLE.format(help=STUDY_HELP[kind]) if study else self.SUBTITLE)

    def _goal_field(self, name: str, accessible: str, placeholder: str, tip: str) -> QLineEdit:
        """A number a goal takes (its limit, its load); empty when the goal takes none."""
        edit = QLineEdit(self)
        edit.setObjectName(name)
        edit.setAccessibleName(accessible)
        edit.setPlaceholderText(placeholder)
        edit.setToolTip(tip)
        edit.textChanged.connect(self._changed)
        return edit

    @Slot()
    def _goal_changed(self, *_args: object) -> None:
        """Only the chosen goal's own field takes a value."""
        goal = self.goal_box.currentData()
        self.p99_edit.setEnabled(goal == GoalKind.P99_CAP)
        self.load_edit.setEnabled(goal == GoalKind.LOWEST_P99)
        self._changed()

    @Slot()
    def _changed(self, *_args: object) -> None:
        choices, study = self.choices(), self.study_fields.study()
        self.errors = self.session.problems(choices, study)
        sweep = study.kind is StudyKind.SWEEP
        if self._budget_problem and sweep:
            self.errors["budget"] = self._budget_problem
        for name, edit in self.edits.items():
            edit.setStyleSheet(f"border: 1px solid {ERROR_COLOUR};" if name in self.errors else "")
        self.budget_edit.setStyleSheet(f"border: 1px solid {ERROR_COLOUR};" if "budget" in self.errors else "")
        for edit in (self.p99_edit, self.load_edit):
            edit.setStyleSheet(f"border: 1px solid {ERROR_COLOUR};" if "goal" in self.errors and edit.isEnabled() else "")
        self.error_label.setText("; ".join(self.errors.values()))
        if self.errors:
            self.estimate.setText("Fix the plan to see how long it takes.")
            self._show_reasons(())
        else:
            est = self.session.estimate(choices, study)
            rate = f" at {PLANNED_CREATES_PER_S:,.0f} creates/s per client" if study.kind is StudyKind.DIRS else ""
            fitted = self.session.fit(choices) if sweep else None
            how = f"; {words}" if fitted is not None and (words := fit_text(fitted)) else ""
            bounds = bounds_text(est) if est.least_seconds is not None else ""  # a study's steps have no range
            self.estimate.setText(f"{est.trials} trials, {planned_text(est.seconds, self.session.speed, bounds)}{rate}{how}")
            self._show_reasons(fitted.dropped if fitted is not None else ())
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        return not self.errors

    def validatePage(self) -> bool:
        """Commit only what the admin confirmed; else show what the run would change and ask."""
        if self.errors:
            return False
        try:
            spec = self.session.plan_study(self.choices(), self.study_fields.study())
        except (PlanError, SessionError) as exc:
            self.error_label.setText(str(exc))
            return False
        confirmed, self._confirmed = self._confirmed, None
        if spec == confirmed:
            self.state.spec = spec
            return True
        if self.checking is None:
            self.error_label.setText(CHECKING)
            self.checking = spawn(self._check_then_ask(spec), owner=self)
        return False

    async def _check_then_ask(self, spec: SweepSpec) -> None:
        """The pre-flight check on the spec the run would get; the confirmation only when nothing is in the way."""
        try:
            found = await self.session.preflight(spec)
        except SessionError as exc:
            self.error_label.setText(str(exc))
            return
        finally:
            self.checking = None
        if not found.ok:
            self.error_label.setText("\n".join([NOT_CLEAR, *(f"• {line}" for line in found.lines())]))
            return
        self.error_label.setText("")
        self.ask_to_start(spec)

    def ask_to_start(self, spec: SweepSpec) -> None:
        box = RunConfirmation(self.session.preview(spec), self)
        self.confirmation = box

        def answered(result: int) -> None:
            self.confirmation = None
            box.deleteLater()
            if result == RunConfirmation.DialogCode.Accepted:
                self._confirmed = spec
                self.wizard().next()  # validatePage again, now with the admin's yes

        box.finished.connect(answered)
        box.open()
