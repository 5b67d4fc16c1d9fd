"""Text from a host or a session file is shown in tooltips as it is written, never as HTML (issue 28, finding 9).

Qt reads a tooltip that looks like HTML as rich text: a host or a colleague's session file
could draw an image, a link or a fake warning. Each check reads the tooltip the way Qt
will show it and compares it with the text as written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import Qt, QTextDocument
from PySide6.QtWidgets import QTableWidget

from app.store import Store
from tests.fabricate_session import Recipe, fabricate_session
from ui.review.window import ReviewWindow
from ui.tooltips import plain_tip

HOSTILE = ['<img src="file:///etc/passwd"><b>srv</b>', "<a href='https://evil.example'>click</a>",
           "<p style='color:red'>WARNING: your key changed</p>", "a < b && c > d", "<qt>x</qt>"]  # fmt: skip


def shown(tip: str) -> str:
    """What a tooltip shows: its text, or the plain text of its HTML when Qt reads it as rich text."""
    if not Qt.mightBeRichText(tip):
        return tip
    doc = QTextDocument()
    doc.setHtml(tip)
    return doc.toPlainText()


@pytest.mark.parametrize("text", [*HOSTILE, "line one\nline two", "plain", ""])
def test_a_tooltip_shows_the_text_as_written(qapp, text: str) -> None:  # type: ignore[no-untyped-def]
    assert shown(plain_tip(text)) == text
    assert "<img" not in plain_tip(text) and "<a " not in plain_tip(text)


def test_the_review_windows_tooltips_show_a_sessions_hosts_and_notes_as_written(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "s.db"
    with Store(path) as store:
        fabricate_session(store, Recipe(server=HOSTILE[0], clients=(HOSTILE[1],), samples_per_trial=4, notes=HOSTILE[2]))
    w = ReviewWindow(Store(path), source=str(path), dialogs=None)  # type: ignore[arg-type]
    qtbot.addWidget(w)
    table = w.findChild(QTableWidget)
    assert table is not None
    tips = [table.item(r, c).toolTip() for r in range(table.rowCount()) for c in range(table.columnCount())
            if table.item(r, c) is not None and table.item(r, c).toolTip()]  # fmt: skip
    assert tips, "the table's long columns carry their text as tooltips"
    for tip in tips:
        assert "<img" not in tip and "<a " not in tip and "<p style='color:red'>" not in tip, tip
    assert any(HOSTILE[2] in shown(t) for t in tips) or any(HOSTILE[0] in shown(t) for t in tips)
