"""Changing hosts safely: the journal first, the host's way back second, then the change.

Every change goes: validate → read the current value → journal entry (intended) →
hand the restore steps to the host's dead-man switch → make the change → read the
effective value back → journal entry (applied). ``revert_all`` undoes everything
newest first and checks that the old values are back. While changes are held, a
heartbeat keeps each host's switch from firing.

Each host has a lock of its own: its changes, its restore list and its switch go one at a time, while
different hosts are changed side by side (a trial's clients; both ends of an MTU). ``revert_all`` holds
every host's lock, taken in one order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from app.hosts import HostConnection, HostError, HostPool
from app.hosts.errors import HOST_GONE, CommandTimeout
from app.knobs.deadman import DEFAULT_TIMEOUT, DeadMan, fired_report, forget, restored_ids, with_token
from app.knobs.model import Applied, InvalidValue, KnobError, ReadOnlyHost, Step, Value
from app.knobs.targets import Target, describe_step
from app.store import Store
from app.store.states import JournalState

log = logging.getLogger(__name__)
REVERT_BOUND = 45.0  # seconds one change's putting back may take before its host counts as not answering
APPLY_BOUND = 60.0  # seconds one change may take (a mount, an nfsd restart's own waits are within it)


@dataclass
class _Held:
    applied: Applied
    target: Target
    restore: list[Step]


@dataclass
class _HostState:
    deadman: DeadMan
    held: list[_Held] = field(default_factory=list)
    # After a revert the switch's list still names the change put back: harmless, since
    # replaying it sets the value that is already there, and rewritten by the next change
    # (before it is made) or the next heartbeat. A sweep reverts and applies the same
    # knobs every trial: one write instead of two, each a python start on the host.
    stale: bool = False
    # When the controller last refreshed the switch's heartbeat (a beat, or a restore list written: the switch
    # takes either), monotonic: a host written to within half the interval needs no beat.
    contact: float = 0.0


class RevertFailed(KnobError):
    pass


class ChangeJournal:
    def __init__(
        self,
        store: Store,
        pool: HostPool,
        session_id: int | None = None,
        *,
        deadman_timeout: float = DEFAULT_TIMEOUT,
        token: str | None = None,
    ) -> None:
        self.store = store
        self.pool = pool
        self.session_id = session_id
        self.deadman_timeout = deadman_timeout
        self.token = token or secrets.token_hex(6)
        self._hosts: dict[str, _HostState] = {}
        self._heartbeat: asyncio.Task[None] | None = None
        self._locks: dict[str, asyncio.Lock] = {}  # host -> its lock (the module's docstring)

    @property
    def held(self) -> list[Applied]:
        return [h.applied for s in self._hosts.values() for h in s.held]

    def _lock(self, host: str) -> asyncio.Lock:
        return self._locks.setdefault(host, asyncio.Lock())

    @contextlib.asynccontextmanager
    async def _every_host(self) -> AsyncIterator[None]:
        """Every host's lock, one being changed for the first time too, taken in name order (a holder of one
        lock never waits for another: no two holders can wait on each other)."""
        async with contextlib.AsyncExitStack() as stack:
            for host in sorted(self._locks):
                await stack.enter_async_context(self._lock(host))
            yield

    async def _run(self, conn: HostConnection, step: Step) -> bool:
        """Run one step; whether it succeeded (a failed step that must not fail raises)."""
        priv = await conn.privilege()
        result = await conn.run(step.argv, sudo=not priv.is_root, input=step.input)
        if step.check and not result.ok:
            raise KnobError(f"`{describe_step(step)}` failed on {conn.name}: {result.stderr.strip() or result.stdout.strip()}")
        return result.ok

    async def _host(self, conn: HostConnection) -> _HostState:
        state = self._hosts.get(conn.name)
        if state is None:
            deadman = DeadMan(conn, self.token, self.deadman_timeout)
            await deadman.arm()
            state = self._hosts[conn.name] = _HostState(deadman)
            if self._heartbeat is None:
                self._heartbeat = asyncio.create_task(self._beat_forever())
        return state

    async def _sync_restore(self, state: _HostState, pending: list[_Held]) -> None:
        entries = [
            {"id": h.applied.journal_id, "label": f"{h.applied.knob} {h.applied.target}",
             "steps": [s.to_json() for s in h.restore]}
            for h in [*state.held, *pending]
        ]  # fmt: skip
        sent = time.monotonic()
        await state.deadman.set_restore(entries)
        state.stale = False
        state.contact = sent

    async def apply(self, host: str, target: Target, value: Value) -> Applied:
        """Make one change (see the module's docstring); a host that does not finish it within APPLY_BOUND
        seconds (gone, or frozen with its connection up) counts as not answering: CommandTimeout names it."""
        try:
            return await asyncio.wait_for(self._apply(host, target, value), APPLY_BOUND)
        except TimeoutError:
            raise CommandTimeout(host, f"changing {target.spec.name} on {target.target}", APPLY_BOUND) from None

    async def _apply(self, host: str, target: Target, value: Value) -> Applied:
        problem = target.spec.validity.problem(value) if target.spec.name != "test_mount" else None
        if problem:
            raise InvalidValue(f"{target.spec.name} on {host}: {problem}")
        conn = self.pool[host]
        priv = await conn.privilege()
        if not priv.can_change:
            raise ReadOnlyHost(host, target.spec.name, priv.sudoers_line())
        async with self._lock(host):
            old = await target.read(conn)
            jid = self.store.journal_intend(
                self.session_id, host, target.spec.name, target.target, old, value, detail=f"deadman={self.token}"
            )
            applied = Applied(target.spec.name, host, target.target, old, value, None, jid)
            # The value already in force: nothing to make or put back (a max_block_size "change" would
            # otherwise restart nfsd twice for nothing). A test mount's old value is never its options.
            unchanged = str(old) == str(value)
            held = _Held(applied, target, [] if unchanged else target.restore_steps(old))
            try:
                state = await self._host(conn)
                if not unchanged:  # nothing made, nothing to put back: the switch's list stays as it is
                    await self._sync_restore(state, [held])
            except (KnobError, HostError) as exc:
                self.store.journal_update(jid, JournalState.DISMISSED, f"not made: {exc}")
                raise
            try:
                for step in [] if unchanged else target.set_steps(value):
                    await self._run(conn, step)
                applied.effective = old if unchanged else await target.read(conn)
            except (KnobError, HostError) as exc:
                self.store.journal_update(jid, JournalState.FAILED, with_token(self.token, str(exc)))
                state.held.append(held)
                await self._revert_one(state, held)  # put back what may have half-taken
                raise
            state.held.append(held)
            if applied.clamped:
                applied.notes.append(f"asked for {value}, the host took {applied.effective}")
            self.store.journal_update(
                jid, JournalState.APPLIED, with_token(self.token, f"effective={applied.effective}")
            )
            return applied

    async def _revert_one(self, state: _HostState, held: _Held) -> None:
        conn = self.pool[held.applied.host]
        errors = []
        done = False  # whether the step before succeeded: a fallback step runs only when it did not
        for step in held.restore:
            if step.fallback and done:
                continue
            try:
                done = await self._run(conn, step)
            except HOST_GONE:
                raise  # the host went away: the change stays held, for revert_all to name and its switch to put back
            except (KnobError, HostError) as exc:
                errors.append(str(exc))
                done = False
        back: Value | None = None
        if held.restore:  # a change made: read that it is back (a value left as it was has nothing to check)
            with contextlib.suppress(KnobError, HostError):
                back = await held.target.read(conn)
        if back is not None and str(back) != str(held.applied.old) and not errors:
            errors.append(f"{held.applied.knob} reads {back} after revert, expected {held.applied.old}")
        state.held.remove(held)
        if errors:
            self.store.journal_update(held.applied.journal_id, JournalState.FAILED, with_token(self.token, "; ".join(errors)))
            raise RevertFailed(
                f"could not put back {held.applied.knob} on {held.applied.host} ({held.applied.target}): "
                + "; ".join(errors)
            )
        self.store.journal_update(held.applied.journal_id, JournalState.REVERTED)
        state.stale = True

    async def revert(self, applied: Applied) -> None:
        """Put ``applied`` back; a change no longer held (its switch put it back while the host was away, or it
        was left to the switch) has its journal entry saying so already."""
        async with self._lock(applied.host):
            state = self._hosts.get(applied.host)
            held = next((h for h in state.held if h.applied is applied), None) if state is not None else None
            if state is not None and held is not None:
                try:
                    await asyncio.wait_for(self._revert_one(state, held), REVERT_BOUND)
                except TimeoutError:  # frozen with its connection up: named, as a lost host is
                    raise CommandTimeout(applied.host, f"putting back {applied.knob} on {applied.target}",
                                         REVERT_BOUND) from None

    async def revert_all(self) -> list[str]:
        """Undo every held change, newest first; returns the problems (empty when all is back).

        Each change gets REVERT_BOUND seconds: a host that does not answer within it (gone, or frozen with its
        connection up) is named and left to its dead-man switch, and its other changes are not tried."""
        problems: list[str] = []
        async with self._every_host():
            left: list[str] = []  # hosts whose switch puts their changes back: never disarmed, no more heartbeats
            for name, state in list(self._hosts.items()):
                for held in reversed(list(state.held)):
                    try:
                        await asyncio.wait_for(self._revert_one(state, held), REVERT_BOUND)
                    except (KnobError, HostError, TimeoutError) as exc:
                        if isinstance(exc, (TimeoutError, *HOST_GONE)):
                            problems.append(self._left_to_switch(state, exc))
                            left.append(name)
                            break
                        problems.append(str(exc))
            for name in left:
                del self._hosts[name]
            for name, state in list(self._hosts.items()):
                if not state.held:
                    with contextlib.suppress(KnobError, HostError):
                        await state.deadman.disarm()
                    del self._hosts[name]
        return problems

    def _left_to_switch(self, state: _HostState, exc: BaseException) -> str:
        """A host that stopped answering while its changes were put back: what is left, and who puts it back."""
        host = state.deadman.conn.name
        state.deadman.let_go()
        seen = "did not answer within %.0f s" % REVERT_BOUND if isinstance(exc, TimeoutError) else f"was lost ({exc})"
        why = (f"{host} {seen} while its changes were put back; its dead-man switch puts them back within "
               f"{self.deadman_timeout:.0f} s of the last heartbeat (`nfs-tuner journal` checks)")
        for held in state.held:
            self.store.journal_update(held.applied.journal_id, JournalState.FAILED, with_token(self.token, why))
        state.held.clear()
        return why

    async def rejoin(self, host: str) -> str:
        """A host that stopped answering answers again: if its switch fired while it was away, the journal takes
        note of what it put back (read back first), its held changes are dropped, and it is armed again."""
        state = self._hosts.get(host)
        if state is None:
            return ""
        async with self._lock(host):
            if await state.deadman.alive():
                return ""
            conn = self.pool[host]
            done, _problem = restored_ids(await fired_report(conn, self.token))
            back = 0
            for held in list(state.held):
                if held.applied.journal_id in done:
                    now = None
                    with contextlib.suppress(KnobError, HostError):
                        now = await held.target.read(conn)
                    if now is not None and str(now) == str(held.applied.old):
                        self.store.journal_update(held.applied.journal_id, JournalState.REVERTED_BY_HOST,
                                                  "its dead-man switch put it back while the host was away")  # fmt: skip
                        state.held.remove(held)
                        back += 1
            with contextlib.suppress(KnobError, HostError):
                await forget(conn, self.token)
            state.deadman.let_go()  # its writer wrote to the switch that fired: the new one gets its own
            state.deadman = DeadMan(conn, self.token, self.deadman_timeout)
            await state.deadman.arm()
            await self._sync_restore(state, [])
            return (f"its dead-man switch had put back {back} change(s) while it was away; armed again" if back
                    else "its dead-man switch was armed again")

    async def _beat_forever(self) -> None:
        interval = max(1.0, self.deadman_timeout / 6)
        while True:
            await asyncio.sleep(interval)
            for host, state in list(self._hosts.items()):
                if state.stale and not self._lock(host).locked():  # a change under way rewrites the list itself
                    async with self._lock(host):
                        with contextlib.suppress(KnobError, HostError):
                            if state.stale:
                                await self._sync_restore(state, [])
                # A restore list written in the last half interval refreshed it: the heartbeat is then at most
                # 1.5 intervals (a quarter of the switch's timeout) old, and a sweep's hosts beat far less.
                if (sent := time.monotonic()) - state.contact < interval / 2:
                    continue
                try:
                    await state.deadman.beat()
                    state.contact = sent
                except HostError as exc:  # the switch will fire if this goes on: that is its job
                    log.warning("heartbeat to %s failed: %s", state.deadman.conn.name, exc)

    async def close(self) -> list[str]:
        """Revert everything and stop the heartbeat (normal end, cancel, error)."""
        problems = await self.revert_all()
        if self._heartbeat is not None and not self._hosts:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None
        return problems

    async def __aenter__(self) -> ChangeJournal:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
