"""The directory-scaling study: one directory grown to N entries, once per layout.

A study is a plan of one step (experiments.steps.dirs_step): each layout ("flat",
"hashed") is one dir_scaling trial of ``entries`` files with its rate-vs-entries points,
stored like any sweep trial (its samples carry the entries so far: the curve,
app.report.dirs), run by the one engine (journal, revert, resume); a study recommends
no knob.
"""

from __future__ import annotations

LAYOUTS = ("flat", "hashed")
