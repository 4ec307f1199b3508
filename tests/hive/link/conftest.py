"""The client's tests' fixture: scripted arenas, closed after the test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from tests.hive.link.scripted_arena import ArenaScript, ScriptedArena


@pytest.fixture
async def arena_factory() -> AsyncIterator[Callable[[ArenaScript], Awaitable[tuple[ScriptedArena, int]]]]:
    made: list[ScriptedArena] = []

    async def make(script: ArenaScript) -> tuple[ScriptedArena, int]:
        arena = ScriptedArena(script)
        made.append(arena)
        return arena, await arena.start()

    yield make
    for arena in made:
        await arena.close()
