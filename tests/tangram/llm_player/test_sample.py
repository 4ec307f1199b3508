"""The tangram play request the agent primes a model server with at start-up (and ``--check-llm``
sends): before any game, so its start must be what every game's first play begins with."""

from __future__ import annotations

import pytest

from agent.core.prompts import load_prompts
from agent.games.tangram.config import Config
from agent.games.tangram.llm_player.context import TEMPLATE_NAMES, sample_context
from agent.games.tangram.llm_player.sample import llm_sample


@pytest.mark.parametrize("candidates", [0, 1, 3])
def test_the_sample_offers_as_many_candidates_as_play_does(candidates: int) -> None:
    sample = llm_sample(Config.model_validate({"player": "llm", "llm": {"candidates": candidates}}))
    offered = sample.schema["properties"].get("candidate")
    letters = [] if offered is None else offered["anyOf"][0]["enum"]
    assert letters == ["A", "B", "C"][:candidates]


def test_the_system_prompt_is_the_same_whatever_the_objective() -> None:
    config = Config.model_validate({"player": "llm", "llm": {"candidates": 3}})
    sample = llm_sample(config)
    prompts = load_prompts(config.prompts_dir, sample_context(), TEMPLATE_NAMES)
    for objective in ("A cat", "A boat"):
        context = {**sample_context(3), "objective": objective}
        assert prompts.render("system", context) == sample.messages[0]["content"]
        assert objective in prompts.render("play", context)
