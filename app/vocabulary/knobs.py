"""Knobs, their values and whole configurations as text.

A value reads as a plain decimal in the knob's own unit (bytes for rsize, KiB for
read_ahead_kb): what ``--knob NAME=V`` and the Plan page parse back to the same value
(``app.knobs.values.parse_value``), and what the kernel, the config files, the snippets
and the journal hold, so a value copied from any face pastes anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.facts.model import NfsdState
from app.knobs.catalog import ONE_WRITER, SPECS
from app.knobs.model import Scope, size_text
from app.knobs.values import BadValue, parse_value
from app.vocabulary.figures import MISSING
from app.vocabulary.stored import data_text


def knob_label(knob: str) -> str:
    """A knob standing alone: 'nfsd_threads (nfsd threads)'; just 'rsize' where the title adds nothing."""
    spec = SPECS.get(knob)
    if spec is None or knob.lower() in spec.title.lower():
        return knob
    return f"{knob} ({spec.title})"


# Where a change acts, as every sentence about one says it (the catalog's Scope of the knob).
WHERE_TEXT: dict[Scope, str] = {
    Scope.SERVER: "the server",
    Scope.TEST_MOUNT: "the test mount",
    Scope.CLIENT: "the whole client",
    Scope.LINK: "both ends of the link",
}


def where_text(knob: str) -> str:
    """'the whole client': where a change of ``knob`` acts, as its catalog entry says."""
    return WHERE_TEXT[SPECS[knob].scope]


def knob_value_text(knob: str, value: Any) -> str:
    """'1048576', '4.2', 'sync': a stored value ("1M", "SYNC" or 1048576) in the one form the parser reads back."""
    if value is None or value == "":  # nothing before: nfs-tuner's own test mount did not exist
        return MISSING
    if isinstance(value, Mapping | list | tuple):  # a journal's compound value (mount options, …)
        return data_text(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        try:
            parsed: Any = parse_value(knob, value)
        except BadValue:  # not a value of this knob (older or foreign data): as it was stored
            return value
        value = parsed
    return _size(knob, value) or str(value)


def _size(knob: str, value: object) -> str | None:
    """'64M', '1G' for a memory limit counted in bytes (dirty_bytes): nine digits read badly. Sizes below
    16 MiB (rsize, wsize, the MTU) stay plain numbers, as the kernel prints them."""
    spec = SPECS.get(knob)
    if spec is None or spec.unit != "bytes" or not isinstance(value, int) or isinstance(value, bool) or value < 16 << 20:
        return None
    return size_text(value)


def knob_values_text(knob: str, values: Iterable[Any]) -> str:
    """Values to try, as the admin types them: '8, 16, 64'."""
    return ", ".join(knob_value_text(knob, v) for v in values)


def setting_text(knob: str, value: Any) -> str:
    """'rsize=1048576'."""
    return f"{knob}={knob_value_text(knob, value)}"


def config_text(config: Mapping[str, Any]) -> str:
    """'nfsd_threads=32, rsize=1048576' (sorted by knob); '(no knobs)' for an empty one."""
    return ", ".join(setting_text(k, config[k]) for k in sorted(config)) or "(no knobs)"


def trial_config_text(config: Mapping[str, Any], step: str = "") -> str:
    """What a trial ran at, led by a study's step: '8 streams per client, nfsd_threads=4'; else config_text."""
    if not step:
        return config_text(config)
    return ", ".join((step, *(setting_text(k, config[k]) for k in sorted(config))))


def held_text(config: Mapping[str, Any]) -> str:
    """The knobs a study held for every trial: 'nfsd_threads=8', or "the hosts' own settings" for none."""
    return config_text(config) if config else "the hosts' own settings"


def transition_text(knob: str, old: Any, new: Any) -> str:
    """'8 → 64'."""
    return f"{knob_value_text(knob, old)} → {knob_value_text(knob, new)}"


def change_text(knob: str, old: Any, new: Any) -> str:
    """'nfsd_threads 8 → 64'."""
    return f"{knob} {transition_text(knob, old, new)}"


def coherence_text(config: Mapping[str, Any]) -> str:
    """What ``config``'s client caching risks, or "" when it risks nothing: nocto, and an actimeo above 0."""
    risks = []
    if str(config.get("nocto", "cto")) == "nocto":
        risks.append("with nocto a client may not see another client's changes when it opens a file")
    seconds = config.get("actimeo")
    if isinstance(seconds, int | str) and str(seconds).isdigit() and int(seconds) > 0:
        risks.append(f"with actimeo={int(seconds)} file sizes and times may be up to {int(seconds)} s stale")
    return f"Cache coherence: {'; '.join(risks)}. {ONE_WRITER}" if risks else ""


def nfsd_threads_text(nfsd: NfsdState) -> str:
    """'8 threads in 1 pool (global)', 'self-scaling, 2 to 8 threads in 1 pool (global)'."""
    pools = f" in {nfsd.npools} pool{'s' if nfsd.npools != 1 else ''}" if nfsd.npools else ""
    mode = f" ({nfsd.pool_mode})" if nfsd.pool_mode else ""
    if nfsd.self_scaling:
        return f"self-scaling, {nfsd.min_threads} to {nfsd.threads} threads{pools}{mode}"
    return f"{nfsd.threads} threads{pools}{mode}"
