"""After a crash: what the journal says may still be changed, and setting it right.

On start, entries that were never reverted are looked up on their hosts. Where the
host's dead-man switch already put them back, the journal is told so
(reverted_by_host). The rest are offered to the admin: revert now (write the old
value) or, after checking the host, dismiss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.hosts import HostConnection, HostError, HostPool
from app.knobs.catalog import SPECS
from app.knobs.client_sysctls import CLIENT_SYSCTLS, client_sysctl
from app.knobs.deadman import fired_report, forget, restored_ids, switch_pending, token_of, with_token
from app.knobs.model import KnobError, Step
from app.knobs.network import MtuTarget
from app.knobs.nfsd_netlink import NFSDCTL_THREADS, NfsdctlThreadsTarget, NfsdMinThreadsTarget
from app.knobs.nfsd_restart import NfsdBlockSizeTarget, NfsdPoolModeTarget
from app.knobs.targets import ExportOptionTarget, KernelFileTarget, ScratchMount, Target
from app.store import JournalState, Store
from app.store.records import JournalEntry

@dataclass(frozen=True)
class Pending:
    entry: JournalEntry
    status: str  # "reverted by host", "switch armed", "still changed?", "host unreachable: …"


def target_for(entry: JournalEntry) -> Target:
    """Rebuild the target a journal entry names, to read or restore it."""
    if entry.knob == "nfsd_threads" and entry.target == NFSDCTL_THREADS:
        return NfsdctlThreadsTarget()
    if entry.knob == "nfsd_min_threads":
        return NfsdMinThreadsTarget()  # sets the floor with the thread count it reads now
    if entry.knob in ("nfsd_threads", "stripe_cache_size", "read_ahead_kb"):
        return KernelFileTarget(SPECS[entry.knob], entry.target)
    if entry.knob in ("export_sync", "export_wdelay"):
        client, _, path = entry.target.partition(":")
        return ExportOptionTarget(path, client, SPECS[entry.knob])
    if entry.knob == "mtu":
        return MtuTarget(entry.target)
    if entry.knob == "max_block_size":
        return NfsdBlockSizeTarget()  # restarts with the thread count it reads now
    if entry.knob == "pool_mode":
        return NfsdPoolModeTarget()
    if entry.knob in CLIENT_SYSCTLS:
        return client_sysctl(entry.knob, entry.target)
    if entry.knob == "test_mount":
        return ScratchMount("", "", entry.target)
    raise KnobError(f"journal entry {entry.id} names an unknown knob {entry.knob!r}")


async def inspect(store: Store, pool: HostPool) -> list[Pending]:
    """Look at every unreverted entry's host; mark those its switch put back."""
    out: list[Pending] = []
    reports: dict[tuple[str, str], Any] = {}  # a fired switch's report, of any shape (restored_ids judges it)
    for entry in store.unreverted_journal():
        token = token_of(entry.detail)
        conn = pool[entry.host]
        try:
            if token and (entry.host, token) not in reports:
                reports[(entry.host, token)] = await fired_report(conn, token)
            report = reports.get((entry.host, token or ""))
            done, damaged = restored_ids(report) if report is not None else (frozenset(), "")
            if damaged:  # its claims are not taken: the value itself is read
                now = await _live_value(conn, entry)
                state = "back to its old value" if now == str(entry.old_value) else f"reads {now}"
                out.append(Pending(entry, f"still changed? the host's switch fired but {damaged}; {state}"))
                continue
            live = await _live_value(conn, entry) if entry.id in done else None
            if entry.id in done and live in (str(entry.old_value), GONE_WITH_MOUNT):
                store.journal_update(entry.id, JournalState.REVERTED_BY_HOST,
                                     "the host's dead-man switch restored it (read back)")  # fmt: skip
                out.append(Pending(entry, "reverted by host"))
            elif entry.id in done:
                # The switch's report is a claim: the value read now says otherwise.
                out.append(Pending(entry, f"still changed? the host's switch reported it restored, but it reads {live}"))
            elif token and await switch_pending(conn, token):
                out.append(Pending(entry, "switch armed: the host restores it once its controller has been silent for the switch's timeout"))
            elif (live := await _live_value(conn, entry)) in (str(entry.old_value), GONE_WITH_MOUNT):
                # Back, though no switch says so: a put-back the host finished late (one sent while it was frozen),
                # or a switch whose own step then found nothing left to do. The value read is the fact.
                store.journal_update(entry.id, JournalState.REVERTED_BY_HOST, "found at its old value when checked (read back)")
                out.append(Pending(entry, "reverted by host"))
            else:
                out.append(Pending(entry, "still changed?"))
        except HostError as exc:
            out.append(Pending(entry, f"host unreachable: {exc}"))
        except KnobError as exc:  # an entry nfs-tuner cannot rebuild: shown, and the others still looked up
            out.append(Pending(entry, f"still changed? it cannot be checked: {exc}"))
    for (host, token), report in reports.items():
        if report is not None and all(p.entry.host != host or p.status == "reverted by host" for p in out):
            try:
                await forget(pool[host], token)
            except HostError:
                pass
    return out


GONE_WITH_MOUNT = "gone with its mount"


async def _live_value(conn: HostConnection, entry: JournalEntry) -> str:
    """The entry's value as the host has it now, in the journal's words."""
    try:
        return str(await target_for(entry).read(conn))
    except KnobError as exc:
        # A test mount's readahead lives in its bdi, which goes when the switch unmounts it.
        if entry.knob == "read_ahead_kb" and not (await conn.run(["test", "-e", entry.target])).ok:
            return GONE_WITH_MOUNT
        return f"unreadable ({exc})"


async def revert_entry(store: Store, pool: HostPool, entry: JournalEntry) -> None:
    """Write the entry's old value back (the admin chose to revert a crash leftover)."""
    conn = pool[entry.host]
    target = target_for(entry)
    steps: list[Step]
    if isinstance(target, ExportOptionTarget):
        await target.read(conn)  # learn the export's other options, then set the old mode
        steps = target.set_steps(entry.old_value)
    elif isinstance(target, NfsdBlockSizeTarget | NfsdMinThreadsTarget):
        await target.read(conn)  # today's thread count: the restart, or the floor's setting, keeps it
        steps = target.restore_steps(entry.old_value)
    else:
        steps = target.restore_steps(entry.old_value)
    priv = await conn.privilege()
    for step in steps:
        result = await conn.run(step.argv, sudo=not priv.is_root, input=step.input)
        if step.check and not result.ok:
            store.journal_update(entry.id, JournalState.FAILED, with_token(token_of(entry.detail), result.stderr.strip()))
            raise KnobError(f"could not revert {entry.knob} on {entry.host}: {result.stderr.strip()}")
    store.journal_update(entry.id, JournalState.REVERTED, "reverted after a crash")


def dismiss(store: Store, entry: JournalEntry, why: str = "checked by the admin") -> None:
    store.journal_update(entry.id, JournalState.DISMISSED, why)
