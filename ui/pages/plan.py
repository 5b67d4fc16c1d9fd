"""Page 3: which knobs to sweep over which values, on which workloads, how often.

Its commit button only asks: the run starts from the confirmation (ui.run_confirmation),
which lists what the run changes on each host, and only on its explicit "Start run"."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
    QWizard,
)

from app.knobs.model import Safety
from app.session import STRATEGY_TEXT, WORKLOADS, KnobChoice, PlanChoices, PlanError, SessionError, plan_problems
from app.session.choices import DEFAULT_BASELINE_WORKLOADS
from app.vocabulary import duration_text, knob_label
from app.sweep.spec import SweepSpec
from ui.focus import tab_moves_on
from ui.pages.base import Page
from ui.run_confirmation import RunConfirmation
from ui.theme import ERROR_COLOUR, SAFETY_COLOURS, buddy_label, emphasize

COLUMNS = ("Sweep", "Knob", "Where", "Today", "Values to try", "Allowed", "Safety")
ASYNC_WARNING = (
    "<p><b>async exports are fast because the server acknowledges writes before they are on disk.</b></p>"
    "<p>If the server crashes or loses power, data the clients were told is safe can be lost or "
    "corrupted, silently.</p><p>nfs-tuner will measure async only if you agree, and will never "
    "recommend it without this warning. Include async in the sweep?</p>"
)


SAFETY_TEXT = {
    Safety.SAFE: "safe at run time",
    Safety.MEMORY: "costs memory on the host",
    Safety.SERVICE: "a wrong value starves a service",
    Safety.CONNECTIVITY: "may cut the connection",
    Safety.DATA_RISK: "may lose data on a crash",
}


def allowed_text(knob: KnobChoice) -> str:
    v = knob.spec.validity
    return v.describe() + (f" {knob.spec.unit}" if knob.spec.unit and not v.choices else "")


def safety_text(knob: KnobChoice) -> str:
    text = SAFETY_TEXT[knob.spec.safety]
    return ("⚠ " if knob.needs_opt_in else "") + (f"{text}, on a fresh test mount" if knob.on_test_mount else text)


class PlanPage(Page):
    TITLE = "Plan"
    SUBTITLE = "Choose the knobs and the values to try. Each trial changes them on the hosts and puts them back after."

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.knobs = self.session.knobs()
        self.errors: dict[str, str] = {}
        self.async_warning: QMessageBox | None = None
        self.confirmation: RunConfirmation | None = None
        self._confirmed: SweepSpec | None = None  # what the admin agreed to run in the confirmation
        self.setCommitPage(True)  # after this the run changes hosts: no going back
        self.setButtonText(QWizard.WizardButton.CommitButton, "Start &run…")  # asks first; &S is the Sessions menu's

        self.table = QTableWidget(len(self.knobs), len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAccessibleName("Knobs to sweep")
        tab_moves_on(self.table)  # Tab goes from check box to values field, not cell by cell
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.checks: dict[str, QCheckBox] = {}
        self.edits: dict[str, QLineEdit] = {}
        for row, knob in enumerate(self.knobs):
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
            self.table.setCellWidget(row, 4, edit)
            self.table.setItem(row, 5, QTableWidgetItem(allowed_text(knob)))
            safety = QTableWidgetItem(safety_text(knob))
            safety.setForeground(QColor(SAFETY_COLOURS[knob.spec.safety]))
            self.table.setItem(row, 6, safety)
            if knob.needs_opt_in:
                check.setChecked(False)
                check.setEnabled(False)
                edit.setEnabled(False)
        self.table.resizeRowsToContents()

        self.async_box = QCheckBox("Also try &async exports (unsafe: may lose data on a server crash)", self)
        self.async_box.setObjectName("asyncOptIn")
        self.async_box.clicked.connect(self._async_clicked)
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
        self.workload_list.itemChanged.connect(self._changed)
        defaults = self.session.plan_defaults
        self.strategy_box = QComboBox(self)
        self.strategy_box.setAccessibleName("Strategy")  # a combo box is read out by its text, not its label
        for key, text in STRATEGY_TEXT.items():
            self.strategy_box.addItem(text, key)
        self.strategy_box.setCurrentIndex(self.strategy_box.findData(defaults.strategy))
        self.strategy_box.currentIndexChanged.connect(self._changed)
        self.reps = QSpinBox(self)
        self.reps.setRange(1, 10)
        self.reps.setValue(defaults.repetitions)
        self.reps.setToolTip("Each configuration runs at least this many times, and up to three times as many while "
                             "its runs disagree; the ranking uses the mean and its 95 % CI.")
        self.reps.valueChanged.connect(self._changed)
        self.estimate = QLabel(self)
        self.estimate.setObjectName("estimateLabel")
        emphasize(self.estimate)

        side = QWidget(self)
        form = QFormLayout(side)
        form.setContentsMargins(0, 0, 0, 0)
        wl_box = QGroupBox("&Workloads", self)
        QVBoxLayout(wl_box).addWidget(self.workload_list)
        form.addRow(wl_box)
        form.addRow(buddy_label("S&trategy:", self.strategy_box, self), self.strategy_box)
        form.addRow(buddy_label("Re&petitions:", self.reps, self), self.reps)  # &R is Start run's
        form.addRow(self.estimate)
        body = QHBoxLayout()
        knobs_col = QVBoxLayout()
        knobs_col.addWidget(self.table, 1)
        knobs_col.addWidget(self.async_box)
        knobs_col.addWidget(self.error_label)
        body.addLayout(knobs_col, 3)
        body.addWidget(side, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(body)
        self._changed()

    def initializePage(self) -> None:
        # today's values are known once the hosts are connected
        for row, knob in enumerate(self.session.knobs()):
            self.knobs[row] = knob
            self.table.setItem(row, 3, QTableWidgetItem(knob.current))
        measured = set(self.state.baseline.today) if self.state.baseline else set()
        measured = measured or set(DEFAULT_BASELINE_WORKLOADS)
        self.workload_list.blockSignals(True)
        for i in range(self.workload_list.count()):
            item = self.workload_list.item(i)
            checked = item.data(Qt.ItemDataRole.UserRole) in measured
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self.workload_list.blockSignals(False)
        self._changed()

    # --- async opt-in ---
    @Slot(bool)
    def _async_clicked(self, checked: bool) -> None:
        if not checked:
            self._set_async(False)
            return
        self.async_box.setChecked(False)  # only a "Yes" in the warning turns it on
        box = QMessageBox(QMessageBox.Icon.Warning, "async exports can lose data", ASYNC_WARNING,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setObjectName("asyncWarning")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.button(QMessageBox.StandardButton.Yes).setText("&Include async, I understand")
        box.finished.connect(lambda _r: self._set_async(box.clickedButton() is box.button(QMessageBox.StandardButton.Yes)))
        self.async_warning = box
        box.open()

    def _set_async(self, on: bool) -> None:
        self.async_box.setChecked(on)
        for knob in self.knobs:
            if knob.needs_opt_in:
                self.checks[knob.name].setEnabled(on)
                self.checks[knob.name].setChecked(on)
                self.edits[knob.name].setEnabled(on)
        self._changed()

    # --- the plan and its checks: the core's (app.session.plan), in the CLI's words ---
    def choices(self) -> PlanChoices:
        knobs = {k.name: self.edits[k.name].text() for k in self.knobs if self.checks[k.name].isChecked()}
        workloads = tuple(
            str(self.workload_list.item(i).data(Qt.ItemDataRole.UserRole))
            for i in range(self.workload_list.count())
            if self.workload_list.item(i).checkState() == Qt.CheckState.Checked
        )
        return self.session.choices(knobs=knobs, workloads=workloads, strategy=self.strategy_box.currentData(),
                                    repetitions=self.reps.value(), allow_async=self.async_box.isChecked())  # fmt: skip

    @Slot()
    def _changed(self, *_args: object) -> None:
        choices = self.choices()
        self.errors = plan_problems(choices)
        for name, edit in self.edits.items():
            edit.setStyleSheet(f"border: 1px solid {ERROR_COLOUR};" if name in self.errors else "")
        self.error_label.setText("; ".join(self.errors.values()))
        if self.errors:
            self.estimate.setText("Fix the plan to see how long it takes.")
        else:
            est = self.session.estimate(choices)
            self.estimate.setText(f"{est.trials} trials, about {duration_text(est.seconds)}")
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        return not self.errors

    def validatePage(self) -> bool:
        """Commit only what the admin confirmed; else show what the run would change and ask."""
        if self.errors:
            return False
        try:
            spec = self.session.plan(self.choices())
        except (PlanError, SessionError) as exc:
            self.error_label.setText(str(exc))
            return False
        confirmed, self._confirmed = self._confirmed, None
        if spec == confirmed:
            self.state.spec = spec
            return True
        self.ask_to_start(spec)
        return False

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
