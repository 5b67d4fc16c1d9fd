"""The directory-scaling study: one directory grown to N entries, once per layout.

A study is a sweep whose spec lists ``dirs`` (the layouts: "flat", "hashed"); each layout
is one dir_scaling trial of ``entries`` files with its rate-vs-entries points, stored like
any sweep trial (its samples carry the entries so far: the curve, app.report.dirs). The
engine is the load ladder's (one trial per step, journal, revert, resume); a study
recommends no knob.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.sweep.ladder import LadderEngine

LAYOUTS = ("flat", "hashed")


class DirsEngine(LadderEngine):
    """The ladder's loop over layouts instead of streams."""

    STEP_FIELD = "layout"

    def _steps(self) -> tuple[Any, ...]:
        return self.spec.dirs

    def _at(self, step: Any | None) -> None:
        self.spec = replace(self.spec, layout=step)

    def _step_text(self) -> str:
        return f"{self.spec.layout} layout, {self.spec.entries:,} entries" if self.spec.layout else ""
