"""A tangram play request as the LLM player sends it, for ``--check-llm``: the templates rendered
with their sample context, the pictures of a game's first position as the simulator draws them
(prepared with the config's image settings), and the move schema with two candidates."""

from __future__ import annotations

from typing import Any

from agent.core.images import prepare_image
from agent.core.llm.check import LLMSample
from agent.core.prompts import load_prompts
from agent.games.tangram.config import Config
from agent.games.tangram.llm_player.context import TEMPLATE_NAMES, sample_context
from agent.games.tangram.llm_player.schema import move_schema
from agent.games.tangram.replica.crops import start_images


def llm_sample(config: Config) -> LLMSample:
    # As many candidates as play offers: the schema (its candidate letters) goes at the end of the
    # system message where the server's own schema form is used, so the priming then has the same start.
    context = sample_context(config.llm.candidates)
    prompts = load_prompts(config.prompts_dir, context, TEMPLATE_NAMES)
    board, drawer = start_images()
    pictures = [b64 for b64, wanted in ((board, config.images.send_board), (drawer, config.images.send_drawer))
                if wanted]
    images = [{"type": "image_url", "image_url": {"url": prepare_image(b64, config.images).data_url(),
                                                  "detail": config.images.detail}} for b64 in pictures]

    def messages(form: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"role": "system", "content": prompts.render("system", form)},
                {"role": "user", "content": [{"type": "text", "text": prompts.render("play", form)}, *images]}]

    letters = [c["letter"] for c in context["candidates"]]
    return LLMSample(messages=messages(context), schema=move_schema(letters), schema_name="tangram_move",
                     compact=messages({**context, "compact": True}))
