"""Trust on first use: show an unknown host key's fingerprint and ask."""

from __future__ import annotations

import html

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QPushButton, QStyle, QVBoxLayout, QWidget, QHBoxLayout

from app.session import UnknownHostKey


class TrustDialog(QDialog):
    def __init__(self, host: str, key: UnknownHostKey, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.key = key
        self.setObjectName("trustDialog")
        self.setWindowTitle(f"Trust {host}?")
        icon = QLabel(self)
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxQuestion).pixmap(48, 48))
        text = QLabel(
            f"<p>nfs-tuner has not connected to <b>{html.escape(host)}</b> "
            f"({html.escape(key.host if key.port == 22 else f'{key.host} port {key.port}')}) before.</p>"
            f"<p>Its <b>{html.escape(key.key_type)}</b> host key has this fingerprint:</p>", self)
        text.setWordWrap(True)
        self.fingerprint = QLineEdit(key.fingerprint, self)
        self.fingerprint.setObjectName("fingerprint")
        self.fingerprint.setAccessibleName(f"Fingerprint of {host}'s host key")
        self.fingerprint.setReadOnly(True)
        self.fingerprint.setMinimumWidth(460)
        font = self.fingerprint.font()
        font.setFamily("monospace")
        self.fingerprint.setFont(font)
        hint = QLabel(
            "Compare it with the output of <code>ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub</code> "
            "on the host itself. Trust it only if they match; the key is then remembered.", self)
        hint.setWordWrap(True)
        buttons = QDialogButtonBox(self)
        self.trust_button = buttons.addButton("&Trust and connect", QDialogButtonBox.ButtonRole.AcceptRole)
        self.reject_button = buttons.addButton("Do &not trust", QDialogButtonBox.ButtonRole.RejectRole)
        copy = QPushButton("&Copy fingerprint", self)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(key.fingerprint))
        buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        self.reject_button.setDefault(True)  # Enter must not trust by accident
        self.reject_button.setAutoDefault(True)
        self.trust_button.setAutoDefault(False)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        top = QHBoxLayout()
        top.addWidget(icon, 0)
        top.addWidget(text, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.fingerprint)
        layout.addWidget(hint)
        layout.addWidget(buttons)
