"""What the server is for, in the admin's words, and the workloads that stand for it.

The Plan page's "What the server is for" and ``nfs-tuner sweep --use`` both pick from
``USES``; the workloads they set are what the proposal (app.session.proposal) plans and
reasons about. An admin may still choose workloads one by one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Use:
    name: str  # the identifier --use takes
    title: str  # as the Plan page lists it
    workloads: tuple[str, ...]
    example: str  # what such a server serves


USES: dict[str, Use] = {u.name: u for u in (
    Use("large_files", "large files", ("seq_read", "seq_write"), "backups, media, images, scientific data"),
    Use("small_files", "many small files", ("small_files", "seq_read"), "builds, source trees, mail, web content"),
    Use("databases", "databases & random I/O", ("rand_read", "rand_write"), "databases, virtual machine disks"),
    Use("home_dirs", "home directories & mixed", ("mixed", "small_files"), "home directories, shared project space"),
)}  # fmt: skip
DEFAULT_USES = ("large_files",)


def use_label(name: str) -> str:
    """'large files (backups, media, images, scientific data)'."""
    use = USES[name]
    return f"{use.title} ({use.example})"


def workloads_of(uses: Iterable[str]) -> tuple[str, ...]:
    """The workloads of ``uses``, each once, in their order; KeyError names an unknown use."""
    out: list[str] = []
    for name in uses:
        if name not in USES:
            raise KeyError(f"unknown use {name!r}; choose from {', '.join(USES)}")
        out += USES[name].workloads
    return tuple(dict.fromkeys(out))


def use_of(workloads: Iterable[str]) -> str | None:
    """The use whose workloads are exactly ``workloads`` (in any order), or None."""
    wanted = set(workloads)
    return next((name for name, use in USES.items() if set(use.workloads) == wanted), None)
