"""Issue 69: what a local model's prompt cache can keep stays byte-identical from call to call, and a
model whose endpoint does not see pictures is not sent (nor made) any."""

from __future__ import annotations

from pathlib import Path

from agent.core.llm.dialect import Dialect
from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.tangram.planner.candidates import NO_CANDIDATES
from tests.tangram.llm_player.test_reask import make_player


async def test_the_schema_allows_every_letter_the_config_can_offer_whatever_this_turn_offered(tmp_path: Path) -> None:
    async with FakeOpenAI() as fake:
        player, _ = make_player(fake.base_url, tmp_path, candidates=3)
        try:
            assert player._schema_letters(NO_CANDIDATES) == ["A", "B", "C"]
        finally:
            await player.client.aclose()
        none, _ = make_player(fake.base_url, tmp_path, candidates=0)
        try:
            assert none._schema_letters(NO_CANDIDATES) == []
        finally:
            await none.client.aclose()


async def test_pictures_are_made_only_while_the_endpoint_sends_them(tmp_path: Path) -> None:
    async with FakeOpenAI() as fake:
        player, _ = make_player(fake.base_url, tmp_path)
        try:
            assert player.uses_images
            player.client.endpoint.dialect = Dialect(parts=False, images="unseen")  # a text model, as probed
            assert not player.uses_images
        finally:
            await player.client.aclose()
