"""The fio job file that reproduces the key measurement with a standard tool."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.snippets.model import Snippet, SnippetContext
from experiments.fio import to_fio_job
from experiments.workloads import Mixed, SeqRead, SeqWrite, SmallFiles, WorkloadSpec, workload_from_dict

_BY_OBJECTIVE: dict[str, type[WorkloadSpec]] = {
    "seq_read": SeqRead, "seq_write": SeqWrite, "small_files": SmallFiles, "mixed": Mixed,
}


def key_workload(objective: str, workload: Mapping[str, Any] | None) -> WorkloadSpec:
    """The stored spec when there is one that fio can express, else the objective's default."""
    if workload is not None and "kind" in workload:
        try:
            return workload_from_dict(dict(workload))
        except (ValueError, TypeError):
            pass
    return _BY_OBJECTIVE.get(objective, SeqRead)()


def fio_snippets(ctx: SnippetContext) -> list[Snippet]:
    spec = key_workload(ctx.objective, ctx.workload)
    text = to_fio_job(spec, ctx.mount_point, log_prefix=None)
    return [Snippet("fio", f"fio job reproducing the {ctx.objective} measurement",
                    f"nfs-tuner-{ctx.objective}.fio", text,
                    f"Run on a client: `fio nfs-tuner-{ctx.objective}.fio`. It writes its test files in "
                    f"{ctx.mount_point} and removes them afterwards; drop the client's caches first "
                    "(`sync; echo 3 > /proc/sys/vm/drop_caches`).", "client")]
