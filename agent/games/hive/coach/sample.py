"""The bee coach's request as play sends it, for ``--check-llm``."""

from __future__ import annotations

from agent.core.llm.check import LLMSample
from agent.games.hive.coach.coach import _sample_context, load_hive_prompts
from agent.games.hive.config import HiveConfig
from agent.games.hive.strategy.plan import plan_json_schema


def llm_sample(config: HiveConfig) -> LLMSample:
    prompts = load_hive_prompts(config.resolve_dir(config.prompts_dir))
    context = _sample_context()
    short = {**context, "compact": True}
    return LLMSample(messages=prompts.messages("system", "plan", context), schema=plan_json_schema(),
                     schema_name="hive_plan", compact=prompts.messages("system", "plan", short))
