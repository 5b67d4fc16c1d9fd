"""Changes a sweep keeps from trial to trial while their value stays: the server's knobs,
the MTU, the clients' kernel settings.

A new value puts the held one back first, then makes the new one, so the journal never
stacks values. Some changes restore what they read when made, and that includes another
held knob's value: each export option re-exports the whole option list it read, and a
max_block_size restart brings back the thread count it read. In such a group, a change
to one member also puts back every member made after it (newest first), and they are
made again in order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

from app.hosts.side_by_side import side_by_side
from app.knobs.model import Value

T = TypeVar("T")  # what making a change returns: the journal's Applied, or a simulated journal id
Key = tuple[str, str]  # (host, knob)


class HeldChanges(Generic[T]):
    def __init__(self, revert: Callable[[T], Awaitable[None]], host_of: Callable[[T], str] | None = None) -> None:
        self._revert = revert
        self._host_of = host_of  # given: one key's changes on different hosts are put back side by side
        self._held: dict[Key, tuple[Value, list[T]]] = {}  # in the order made

    def items(self, key: Key) -> list[T] | None:
        held = self._held.get(key)
        return held[1] if held else None

    def holds(self, key: Key, value: Value) -> bool:
        return key in self._held and str(self._held[key][0]) == str(value)

    async def drop(self, key: Key) -> None:
        if (held := self._held.pop(key, None)) is None:
            return
        items = held[1]
        if self._host_of is not None and len({self._host_of(i) for i in items}) == len(items) > 1:
            # one change per host (both ends of an MTU), made side by side: put back the same way
            await side_by_side(self._revert(i) for i in reversed(items))
            return
        for item in reversed(items):
            await self._revert(item)

    async def put(self, key: Key, value: Value, make: Callable[[], Awaitable[list[T]]]) -> tuple[list[T], bool]:
        """(what holds ``value`` under ``key``, whether it was made now)."""
        if self.holds(key, value):
            return self._held[key][1], False
        await self.drop(key)
        made = await make()
        self._held[key] = (value, made)
        return made, True

    async def put_group(
        self, group: Sequence[tuple[Key, Value]], make: Callable[[Key, Value], Awaitable[list[T]]]
    ) -> list[tuple[list[T], bool]]:
        """``put`` for each member in order; from the first member whose value changes, every later
        held member is put back first (newest first), since it read the earlier one's value."""
        first = next((i for i, (k, v) in enumerate(group) if k in self._held and not self.holds(k, v)), None)
        if first is not None:
            for key, _ in reversed(group[first:]):
                await self.drop(key)
        return [await self.put(k, v, lambda k=k, v=v: make(k, v)) for k, v in group]  # type: ignore[misc]

    async def drop_all(self, where: Callable[[Key], bool] = lambda key: True) -> None:
        """Put back every held change whose key ``where`` picks, the last made first."""
        for key in reversed([k for k in self._held if where(k)]):
            await self.drop(key)
