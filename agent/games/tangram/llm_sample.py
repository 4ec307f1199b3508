"""A tangram play request as the LLM player sends it, for ``--check-llm``: the templates rendered
with their sample context, the pictures of a game's first position as the simulator draws them
(prepared with the config's image settings), and the move schema with two candidates."""

from __future__ import annotations

from typing import Any

from agent.core.images import prepare_image
from agent.core.llm_check import LLMSample
from agent.core.prompts import load_prompts
from agent.games.tangram.config import Config
from agent.games.tangram.moves import move_schema
from agent.games.tangram.prompt_context import TEMPLATE_NAMES, sample_context
from agent.games.tangram.sim.game import SimGame


def llm_sample(config: Config) -> LLMSample:
    context = sample_context()
    prompts = load_prompts(config.prompts_dir, context, TEMPLATE_NAMES)
    board, drawer = SimGame("A house").images()
    pictures = [b64 for b64, wanted in ((board, config.images.send_board), (drawer, config.images.send_drawer))
                if wanted]
    content: list[dict[str, Any]] = [{"type": "text", "text": prompts.render("play", context)}]
    for b64 in pictures:
        prepared = prepare_image(b64, config.images)
        content.append({"type": "image_url", "image_url": {"url": prepared.data_url(),
                                                           "detail": config.images.detail}})
    return LLMSample(messages=[{"role": "system", "content": prompts.render("system", context)},
                               {"role": "user", "content": content}],
                     schema=move_schema(["A", "B"]), schema_name="tangram_move")
