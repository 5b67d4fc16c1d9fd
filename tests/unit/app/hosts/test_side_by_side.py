"""Work on several hosts at once ends as one (app.hosts.side_by_side)."""

from __future__ import annotations

import asyncio

import pytest

from app.hosts.side_by_side import settled, side_by_side


async def part(name: str, delay: float, ended: list[str], fail: bool = False) -> str:
    await asyncio.sleep(delay)
    ended.append(name)
    if fail:
        raise RuntimeError(f"{name} refused")
    return name


def test_every_part_ends_before_the_first_error_in_order_is_raised() -> None:
    ended: list[str] = []

    async def go() -> None:
        await side_by_side([part("a", 0.03, ended, fail=True), part("b", 0.0, ended, fail=True), part("c", 0.06, ended)])

    with pytest.raises(RuntimeError, match="a refused"):  # a's, as one after another would meet first; b's ended first
        asyncio.run(go())
    assert sorted(ended) == ["a", "b", "c"]  # c was not left running: its change is held by the caller's journal


def test_the_parts_that_succeeded_are_returned_in_order() -> None:
    ended: list[str] = []
    done, failed = asyncio.run(settled([part("a", 0.02, ended), part("b", 0.0, ended, fail=True), part("c", 0.0, ended)]))
    assert done == ["a", "c"] and isinstance(failed, RuntimeError)
    assert asyncio.run(side_by_side([part("x", 0.01, ended), part("y", 0.0, ended)])) == ["x", "y"]
