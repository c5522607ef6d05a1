"""`Wake`: the one-shot wake-up waiting runs and questions use instead of `anyio.Event`."""

from __future__ import annotations

import anyio
import pytest

from elicitkit._engine.wake import Wake

pytestmark = pytest.mark.anyio


async def test_a_set_wake_returns_at_once() -> None:
    wake = Wake()
    wake.set()
    with anyio.fail_after(1):
        await wake.wait()
    assert wake.is_set()


async def test_setting_wakes_the_waiter() -> None:
    wake, woke = Wake(), anyio.Event()

    async def waiter() -> None:
        await wake.wait()
        woke.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.lowlevel.checkpoint()
        assert not woke.is_set()
        wake.set()
        with anyio.fail_after(1):
            await woke.wait()


async def test_a_cancelled_wait_leaves_it_usable_and_setting_it_later_is_harmless() -> None:
    wake = Wake()
    with anyio.move_on_after(0.01) as scope:
        await wake.wait()
    assert scope.cancelled_caught
    wake.set()  # the cancelled future is not set again
    with anyio.fail_after(1):
        await wake.wait()
