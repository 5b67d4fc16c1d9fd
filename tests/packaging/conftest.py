"""Markers for the packaging tests (registered here so this folder owns them)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "slow: installs or builds the whole app (minutes); runs in `make test` and CI, "
        "skip locally with -m 'not slow'",
    )
