"""An accessibility walk over one window: names, mnemonics, and Tab out of item views.

What a keyboard or screen-reader user meets, checked on real widgets:

- every widget Tab can land on (and every tool-bar button) has a name: the one Qt's
  accessibility layer hands a screen reader (its accessibleName, a button's text, the
  label whose buddy it is), shown or not yet shown (a page's failure panel, a tab not
  in front);
- no two mnemonics (&X) are alike among what the window shows at once: buttons, labels
  with buddies, group box titles, tab texts and the menu bar (Qt would only cycle
  between them), and none alike within one menu;
- one Tab from inside a list, table or tree leaves it (arrows move inside), and one
  Shift+Tab too.

Qt's own parts of composite widgets (a spin box's line edit, a combo box's popup, a
scroll area's viewport) are Qt's business and are left out.
"""

from __future__ import annotations

import re
from collections import defaultdict

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QTabBar,
    QToolBar,
    QWidget,
)

COMPOSITES = (QAbstractSpinBox, QComboBox, QLineEdit)  # their children are Qt's parts
MNEMONIC = re.compile(r"&(?!&)(.)")


def mnemonic(text: str) -> str | None:
    """The letter of ``text``'s mnemonic, lower case ("&&" is a literal ampersand)."""
    match = MNEMONIC.search(text.replace("&&", ""))
    return match.group(1).lower() if match else None


def describe(widget: QWidget) -> str:
    """Enough to find a widget: its class, what it says, where it sits."""
    what = widget.objectName() or accessible_name(widget) or getattr(widget, "text", lambda: "")() or ""
    path = []
    parent = widget.parentWidget()
    while parent is not None and not parent.isWindow():
        if parent.objectName() or type(parent).__module__.startswith("ui."):
            path.append(parent.objectName() or type(parent).__name__)
        parent = parent.parentWidget()
    return f"{type(widget).__name__} {what!r}" + (f" in {' < '.join(path)}" if path else "")


def accessible_name(widget: QWidget) -> str:
    """The name a screen reader announces for ``widget``."""
    iface = QAccessible.queryAccessibleInterface(widget)
    return (iface.text(QAccessible.Text.Name) if iface is not None else "").strip()


def _is_qt_part(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    if isinstance(parent, QAbstractScrollArea) and widget is parent.viewport():
        return True
    while parent is not None and not parent.isWindow():
        if isinstance(parent, COMPOSITES):
            return True
        parent = parent.parentWidget()
    return False


def interactive_widgets(top: QWidget) -> list[QWidget]:
    """Every widget of ``top``'s window that Tab can land on, plus tool-bar buttons, shown or not."""
    window = top.window()
    found = []
    for w in top.findChildren(QWidget):
        # Qt's parts first: PySide makes whatever a getter returns the Python child of the widget asked, so a
        # viewport asked for its focus proxy (the scroll area it belongs to) would become its own parent's
        # parent, a cycle of wrappers whose collection by the GC segfaults (shiboken 6.11, 6.12)
        if w.window() is not window or _is_qt_part(w) or w.focusProxy() is not None:
            continue
        tabbable = bool(w.focusPolicy() & Qt.FocusPolicy.TabFocus)
        on_toolbar = isinstance(w, QAbstractButton) and isinstance(w.parentWidget(), QToolBar)
        if tabbable or on_toolbar:
            found.append(w)
    return found


def unnamed(top: QWidget) -> list[str]:
    problems = []
    for w in interactive_widgets(top):
        if isinstance(w, QTabBar):
            blank = [i for i in range(w.count()) if not w.tabText(i).replace("&", "").strip()]
            if blank:
                problems.append(f"{describe(w)}: tabs {blank} have no text")
        elif isinstance(w, QToolBar) or w.objectName() == "qt_toolbar_ext_button":
            continue
        elif not (name := accessible_name(w)) or (isinstance(w, QComboBox) and not w.accessibleName()
                                                    and name == w.currentText().strip()):
            # an unnamed combo box is read out by its current text: "Server", not what it chooses
            problems.append(f"{describe(w)} has no accessible name")
    return problems


def _shown(widget: QWidget, window: QWidget) -> bool:
    return widget.isVisible() and widget.window() is window


def mnemonics(top: QWidget) -> dict[str, list[str]]:
    """Each mnemonic letter among what ``top``'s window shows now, with what carries it."""
    window = top.window()
    seen: dict[str, list[str]] = defaultdict(list)

    def note(text: str, what: str) -> None:
        if (letter := mnemonic(text)) is not None:
            seen[letter].append(f"{what} {text!r}")

    for b in top.findChildren(QAbstractButton):
        if _shown(b, window) and not _is_qt_part(b):
            note(b.text(), type(b).__name__)
    for label in top.findChildren(QLabel):
        if _shown(label, window) and label.buddy() is not None:
            note(label.text(), "label")
    for box in top.findChildren(QGroupBox):
        if _shown(box, window):
            note(box.title(), "group box")
    for bar in top.findChildren(QTabBar):
        if _shown(bar, window):
            for i in range(bar.count()):
                note(bar.tabText(i), "tab")
    if isinstance(window, QMainWindow) and window.menuBar().isVisible():
        for action in window.menuBar().actions():
            if action.isVisible():
                note(action.text(), "menu")
    return seen


def mnemonic_clashes(top: QWidget) -> list[str]:
    problems = [f"&{letter} is shared by " + ", ".join(what) for letter, what in mnemonics(top).items() if len(what) > 1]
    window = top.window()
    menus = window.menuBar().findChildren(QMenu) if isinstance(window, QMainWindow) else []
    for menu in menus:
        in_menu: dict[str, list[str]] = defaultdict(list)
        for action in menu.actions():
            if action.isVisible() and (letter := mnemonic(action.text())) is not None:
                in_menu[letter].append(action.text())
        problems += [f"&{letter} in menu {menu.title()!r} is shared by {', '.join(texts)}"
                     for letter, texts in in_menu.items() if len(texts) > 1]  # fmt: skip
    return problems


def _corner(view: QAbstractItemView, last: bool) -> QModelIndex:
    model, root = view.model(), view.rootIndex()
    if model is None or not model.hasIndex(0, 0, root):
        return QModelIndex()
    if not last:
        return model.index(0, 0, root)
    row, column = model.rowCount(root) - 1, 0
    while model.hasIndex(row, column + 1, root):  # a list model's columnCount is not callable from Python
        column += 1
    return model.index(row, column, root)


def tab_traps(top: QWidget) -> list[str]:
    """Every shown list, table or tree Tab can enter must let Tab and Shift+Tab out in one press.

    The cursor is put where a view that keeps Tab would keep it longest: Tab from the
    first cell, Shift+Tab from the last."""
    window = top.window()
    problems = []
    for view in top.findChildren(QAbstractItemView):
        if not _shown(view, window) or not view.isEnabled() or _is_qt_part(view):
            continue
        if not view.focusPolicy() & Qt.FocusPolicy.TabFocus:
            continue
        if view.tabKeyNavigation():
            problems.append(f"{describe(view)} keeps Tab inside (tabKeyNavigation)")
        for key, modifier, last in ((Qt.Key.Key_Tab, Qt.KeyboardModifier.NoModifier, False),
                                    (Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier, True)):  # fmt: skip
            view.setFocus(Qt.FocusReason.TabFocusReason)
            if (corner := _corner(view, last)).isValid():
                view.setCurrentIndex(corner)
            QTest.keyClick(view, key, modifier)
            focus = window.focusWidget()
            if focus is view or focus is view.viewport():
                press = "Tab" if key == Qt.Key.Key_Tab else "Shift+Tab"
                problems.append(f"{press} does not leave {describe(view)}")
    # Qt keeps Shift as held after the Shift+Tab click: a later selectRow would extend a selection.
    QTest.keyRelease(window, Qt.Key.Key_Shift)
    return problems


def walk(top: QWidget) -> list[str]:
    """Every problem the walk finds in ``top``'s window, in words (an empty list: none)."""
    QApplication.processEvents()
    return [*unnamed(top), *mnemonic_clashes(top), *tab_traps(top)]
