"""Page 3: which knobs to sweep over which values, on which workloads, how often."""

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

from ui.core_api import KnobSpec, Plan, SafetyClass, Strategy
from ui.pages.base import Page, duration
from ui.theme import SAFETY_COLOURS, emphasize

COLUMNS = ("Sweep", "Knob", "Where", "Today", "Values to try", "Allowed", "Safety")
ASYNC_WARNING = (
    "<p><b>async exports are fast because the server acknowledges writes before they are on disk.</b></p>"
    "<p>If the server crashes or loses power, data the clients were told is safe can be lost or "
    "corrupted, silently.</p><p>nfs-tuner will measure async only if you agree, and will never "
    "recommend it without this warning. Include async in the sweep?</p>"
)


def allowed_text(knob: KnobSpec) -> str:
    if knob.choices:
        return " | ".join(knob.choices)
    return f"{knob.minimum}–{knob.maximum}" + (f" {knob.unit}" if knob.unit else "")


class PlanPage(Page):
    TITLE = "Plan"
    SUBTITLE = "Choose the knobs and the values to try. Each trial changes them on the hosts and puts them back after."

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.knobs = list(self.core.knobs())
        self.errors: dict[str, str] = {}
        self.async_warning: QMessageBox | None = None
        self.setCommitPage(True)  # after this the run changes hosts: no going back
        self.setButtonText(QWizard.WizardButton.CommitButton, "&Start run")

        self.table = QTableWidget(len(self.knobs), len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.checks: dict[str, QCheckBox] = {}
        self.edits: dict[str, QLineEdit] = {}
        for row, knob in enumerate(self.knobs):
            check = QCheckBox(self.table)
            check.setAccessibleName(f"Sweep {knob.label}")
            check.setChecked(knob.safety in (SafetyClass.SAFE, SafetyClass.REMOUNT))
            edit = QLineEdit(", ".join(knob.suggested), self.table)
            edit.setAccessibleName(f"Values of {knob.label}")
            edit.setToolTip(f"{knob.help}\nComma-separated; allowed: {allowed_text(knob)}")
            check.toggled.connect(self._changed)
            edit.textChanged.connect(self._changed)
            self.checks[knob.name], self.edits[knob.name] = check, edit
            holder = QWidget(self.table)
            hl = QHBoxLayout(holder)
            hl.setContentsMargins(6, 0, 0, 0)
            hl.addWidget(check)
            self.table.setCellWidget(row, 0, holder)
            self.table.setItem(row, 1, QTableWidgetItem(knob.label))
            self.table.item(row, 1).setToolTip(knob.help)
            self.table.setItem(row, 2, QTableWidgetItem(knob.scope))
            self.table.setItem(row, 3, QTableWidgetItem(knob.current))
            self.table.setCellWidget(row, 4, edit)
            self.table.setItem(row, 5, QTableWidgetItem(allowed_text(knob)))
            safety = QTableWidgetItem(("⚠ " if knob.safety is SafetyClass.DATA_RISK else "") + knob.safety.value)
            safety.setForeground(QColor(SAFETY_COLOURS[knob.safety.name]))
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
        pal.setColor(pal.ColorRole.WindowText, QColor(SAFETY_COLOURS["DATA_RISK"]))
        self.error_label.setPalette(pal)

        self.workload_list = QListWidget(self)
        self.workload_list.setAccessibleName("Workloads")
        for w in self.core.workloads():
            item = QListWidgetItem(w.label, self.workload_list)
            item.setData(Qt.ItemDataRole.UserRole, w.name)
            item.setToolTip(w.description)
            item.setCheckState(Qt.CheckState.Unchecked)
        self.workload_list.itemChanged.connect(self._changed)
        self.strategy_box = QComboBox(self)
        for s in Strategy:
            self.strategy_box.addItem(s.value, s)
        self.strategy_box.currentIndexChanged.connect(self._changed)
        self.reps = QSpinBox(self)
        self.reps.setRange(1, 10)
        self.reps.setValue(3)
        self.reps.setToolTip("Each configuration is run this many times; the ranking uses the mean and its 95 % CI.")
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
        form.addRow(QLabel("S&trategy:", self, buddy=self.strategy_box), self.strategy_box)
        form.addRow(QLabel("&Repetitions:", self, buddy=self.reps), self.reps)
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
        for row, knob in enumerate(self.core.knobs()):
            if row < len(self.knobs) and knob.name == self.knobs[row].name:
                self.knobs[row] = knob
                self.table.item(row, 3).setText(knob.current)
        measured = set(self.state.baseline.current_bps) if self.state.baseline else set()
        measured = {w.replace("_", "-") for w in measured} or {"seq-write", "seq-read"}
        self.workload_list.blockSignals(True)
        for i in range(self.workload_list.count()):
            item = self.workload_list.item(i)
            checked = str(item.data(Qt.ItemDataRole.UserRole)).replace("_", "-") in measured
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

    # --- the plan and its checks ---
    def values_of(self, knob: KnobSpec) -> tuple[str, ...]:
        return tuple(v.strip() for v in self.edits[knob.name].text().split(",") if v.strip())

    def build_plan(self) -> Plan:
        knob_values = {k.name: self.values_of(k) for k in self.knobs if self.checks[k.name].isChecked()}
        workloads = tuple(
            str(self.workload_list.item(i).data(Qt.ItemDataRole.UserRole))
            for i in range(self.workload_list.count())
            if self.workload_list.item(i).checkState() == Qt.CheckState.Checked
        )
        return Plan(knob_values, workloads, self.strategy_box.currentData(), self.reps.value(),
                    self.async_box.isChecked())

    def _validate(self, plan: Plan) -> dict[str, str]:
        errors: dict[str, str] = {}
        for knob in self.knobs:
            edit = self.edits[knob.name]
            problem = None
            if knob.name in plan.knob_values:
                values = plan.knob_values[knob.name]
                problem = "give at least one value" if not values else next(
                    (p for v in values if (p := knob.check(v))), None)
                if knob.needs_opt_in and not plan.allow_async:
                    problem = "needs the async opt-in"
            edit.setStyleSheet("" if problem is None else "border: 1px solid #d03030;")
            if problem:
                errors[knob.label] = problem
        if not plan.knob_values:
            errors["knobs"] = "choose at least one knob to sweep"
        if not plan.workloads:
            errors["workloads"] = "choose at least one workload"
        return errors

    @Slot()
    def _changed(self, *_args: object) -> None:
        plan = self.build_plan()
        self.errors = self._validate(plan)
        self.error_label.setText("; ".join(f"{k}: {v}" for k, v in self.errors.items()))
        if self.errors:
            self.estimate.setText("Fix the plan to see how long it takes.")
        else:
            trials, seconds = self.core.estimate_duration(plan)
            self.estimate.setText(f"{trials} trials, about {duration(seconds)}")
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        return not self.errors

    def validatePage(self) -> bool:
        if self.errors:
            return False
        self.state.plan = self.build_plan()
        return True

