"""Workloads as text: the identifier the CLI takes (``seq_read``) and, with room, its name in words."""

from __future__ import annotations

from dataclasses import dataclass

# Short names the CLI and older plans use.
WORKLOAD_ALIASES: dict[str, str] = {"seqread": "seq_read", "seqwrite": "seq_write", "randrw": "mixed",
                                    "smallfiles": "small_files"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class WorkloadWords:
    name: str  # 'sequential read'
    description: str  # what one trial does


# In the order the Plan and Baseline pages offer them.
WORKLOAD_WORDS: dict[str, WorkloadWords] = {
    "seq_write": WorkloadWords("sequential write", "1 MiB writes, one file per client"),
    "seq_read": WorkloadWords("sequential read", "1 MiB reads, caches dropped first"),
    "rewrite": WorkloadWords("rewrite", "1 MiB overwrites of an existing file"),
    "rand_read": WorkloadWords("random 4 KiB read", "4 KiB reads at random offsets"),
    "rand_write": WorkloadWords("random 4 KiB write", "4 KiB writes at random offsets"),
    "mixed": WorkloadWords("random read/write mix", "4 KiB, 70 % reads"),
    "small_files": WorkloadWords("small files", "create, write, fsync, stat small files"),
    "tree": WorkloadWords("directory tree", "build and walk a tree of small files"),
    "dir_scaling": WorkloadWords("large directories", "many entries in one directory"),
}


def workload_id(name: str) -> str:
    """The identifier of a workload named by an alias ('seqread', 'seq-read' → 'seq_read'); others as given."""
    return WORKLOAD_ALIASES.get(name.replace("-", "").lower(), name)


def workload_label(name: str) -> str:
    """'seq_read (sequential read)'; an unknown workload by its identifier alone."""
    kind = workload_id(name)
    words = WORKLOAD_WORDS.get(kind)
    return f"{kind} ({words.name})" if words is not None and words.name != kind else kind


def workload_detail(name: str) -> str:
    """'seq_read (sequential read: 1 MiB reads, caches dropped first)'."""
    kind = workload_id(name)
    words = WORKLOAD_WORDS.get(kind)
    if words is None:
        return kind
    return f"{kind} ({words.description})" if words.name == kind else f"{kind} ({words.name}: {words.description})"
