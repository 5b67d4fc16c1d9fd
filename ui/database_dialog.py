"""A session database the app cannot use at start: said in the command line's words, with a way on.

Damaged, locked, read-only or in a folder that cannot be made: the store's own error says
which and what to do (the same text ``nfs-tuner sessions list`` prints); the dialog offers
another file, the review window on this one (read-only, a private copy: when the file is
there to read), or Quit. Nothing is written to the file the dialog is about.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.store import LockedDatabaseError, ReadOnlyDatabaseError, SchemaTooNewError, StoreError
from ui.review.window import SESSION_FILTER

# A file the review window can read as it is (it reads a private copy): locked, read-only, or written by a newer
# nfs-tuner. A damaged or foreign file has nothing to review.
REVIEWABLE = (LockedDatabaseError, ReadOnlyDatabaseError, SchemaTooNewError)


@dataclass(frozen=True)
class Way:
    """What the admin chose: another database, the review of this one, or to quit."""

    other: Path | None = None
    review: Path | None = None

    @property
    def quit(self) -> bool:
        return self.other is None and self.review is None


def pick_file(parent: QWidget | None) -> Path | None:
    """A session database to use instead, new or existing."""
    path, _ = QFileDialog.getSaveFileName(parent, "Choose a session database", "", SESSION_FILTER,
                                          options=QFileDialog.Option.DontConfirmOverwrite)  # fmt: skip
    return Path(path) if path else None


class DatabaseDialog(QMessageBox):
    def __init__(self, error: StoreError, path: Path, parent: QWidget | None = None,
                 pick: Callable[[QWidget | None], Path | None] = pick_file) -> None:  # fmt: skip
        super().__init__(QMessageBox.Icon.Critical, "The session database cannot be used", str(error),
                         QMessageBox.StandardButton.NoButton, parent)  # fmt: skip
        self.setObjectName("databaseDialog")
        self.setTextFormat(Qt.TextFormat.PlainText)  # a path is data, never markup
        self.setInformativeText("Nothing was changed. Choose another session database, review this one "
                                "read-only, or quit." if isinstance(error, REVIEWABLE) else
                                "Nothing was changed. Choose another session database, or quit.")  # fmt: skip
        self.path = path
        self.pick = pick
        self.other_button = self.addButton("&Choose another file…", QMessageBox.ButtonRole.AcceptRole)
        self.review_button = self.addButton("Open read-only for &review", QMessageBox.ButtonRole.ActionRole)
        self.review_button.setVisible(isinstance(error, REVIEWABLE))
        self.quit_button = self.addButton("&Quit", QMessageBox.ButtonRole.RejectRole)
        self.setDefaultButton(self.other_button)
        self.setEscapeButton(self.quit_button)

    def way(self) -> Way:
        """Ask (modal) and say the way chosen; a file dialog cancelled asks again."""
        while True:
            self.exec()
            clicked = self.clickedButton()
            if clicked is self.review_button:
                return Way(review=self.path)
            if clicked is not self.other_button:
                return Way()
            if (other := self.pick(self)) is not None:
                return Way(other=other)
