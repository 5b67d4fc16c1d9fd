"""Work on several hosts at once, ended as one: each host's part runs to its end before an error is raised.

``asyncio.gather`` would raise the first error while the other hosts' parts go on unseen: a change
made after the caller gave up would be held by nobody. Here every part ends (made, refused or timed
out: each is bounded where it talks to its host), then the first error in the parts' order is raised,
the one the same parts done one after another would have met first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

T = TypeVar("T")


async def settled(parts: Iterable[Awaitable[T]]) -> tuple[list[T], BaseException | None]:
    """The results of the parts that succeeded, in order, and the first error in order (None when none)."""
    results = await asyncio.gather(*parts, return_exceptions=True)
    done = [r for r in results if not isinstance(r, BaseException)]
    return done, next((r for r in results if isinstance(r, BaseException)), None)


async def side_by_side(parts: Iterable[Awaitable[T]]) -> list[T]:
    """Every part's result, in order; or, once all have ended, the first error in order."""
    done, failed = await settled(parts)
    if failed is not None:
        raise failed
    return done
