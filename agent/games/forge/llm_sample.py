"""A Forge decision request as play sends it, for ``--check-llm``: the fake client's own
"cast the best creature" situation, through the same view, context and schema as a real one."""

from __future__ import annotations

from agent.core.llm.check import LLMSample
from agent.games.forge.config import ForgeConfig
from agent.games.forge.factory import load_forge_prompts
from agent.games.forge.fake.catalogue import catalogue
from agent.games.forge.models import parse_request
from agent.games.forge.prompt_context import build_context, schema_for, schema_key
from agent.games.forge.view import build_view

SITUATION = "main 1: cast the best creature"


def llm_sample(config: ForgeConfig) -> LLMSample:
    prompts = load_forge_prompts(config)
    body = dict(catalogue())[SITUATION]
    request = parse_request(body)
    context = build_context(request, build_view(request), [], "", config.decision.max_oracle_chars)
    short = {**context, "compact": True}
    return LLMSample(messages=prompts.messages("system", "decide", context), schema=schema_for(request),
                     schema_name=f"forge_{schema_key(request)}", compact=prompts.messages("system", "decide", short))
