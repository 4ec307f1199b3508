"""Each game's LLM player through llama-cpp-python serving Gemma 3 270M, with the game's shipped LLM
config changed only where a user would change it (base_url, model, api_key_required): requests are
accepted, the server's own prompt count shows the whole prompt arrived, and the model's own answers
decide turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.core.llm import LADDER
from agent.core.local_model import MODEL_ALIAS, LocalModelServer
from benchmarks.llm_real import runs
from tests.llm_real.conftest import FIRST_FORM, SERVER_KIND

# Whole games on a real 270M model on two cores; `-m "not real_llm"` leaves them out.
pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(1800)]
ARRIVED = 0.8
"""The server's prompt count, as a share of the agent's own estimate, that shows the prompt arrived."""
REFUSALS_ALLOWED = 2
"""Requests an endpoint may refuse while the client finds its dialect (issue 29)."""


def local(game: str, server: LocalModelServer, folder: Path, *, for_cpu: bool = False) -> Any:
    """The game's shipped config (``for_cpu``: the one shipped for a model on this machine)."""
    return runs.localised(game, server.base_url, MODEL_ALIAS, folder, local=for_cpu)


def assert_calls_sound(run: runs.Run, config: Any) -> None:
    """Every request was accepted (no HTTP refusal but the at most two that found the dialect), every
    answered call's prompt arrived whole by the server's own count, and the dialect is the first form
    this server takes from where the config starts. How many calls a slow CPU model answers in time is
    measured by the benchmark, not here."""
    calls = run.llm_calls()
    assert calls, "no LLM call was made"
    refused = [c for c in calls if str(c.get("error") or "").startswith("HTTP ")]
    assert not refused, [c.get("error") for c in refused]
    answered = [c for c in calls if c.get("prompt_tokens")]
    assert answered, [c.get("error") for c in calls]
    for call in answered:
        assert call["prompt_tokens"] >= ARRIVED * call["prompt_estimate"], (call["prompt_tokens"],
                                                                            call["prompt_estimate"])
    endpoints = [r for r in run.records if r.get("kind") == "llm_endpoint"]
    start = config.llm.structured_output
    expected = start if LADDER.index(start) >= LADDER.index(FIRST_FORM[SERVER_KIND]) else FIRST_FORM[SERVER_KIND]
    assert endpoints and endpoints[-1]["structured_output"] == expected, endpoints
    assert endpoints[-1]["refused_requests"] <= REFUSALS_ALLOWED, endpoints


async def test_tangram_plays_whole_turns_on_the_real_model(local_llm: LocalModelServer, tmp_path: Path) -> None:
    # configs/local.yaml: gpt4o.yaml's 30 s per request is shorter than a CPU model's first read of the prompt
    config = local("tangram", local_llm, tmp_path, for_cpu=True)
    run = await runs.tangram(config, games=1, turns=3, seed=7, folder=tmp_path)
    assert not run.detail["errors"] and not run.detail["violations"], run.detail
    assert run.detail["turn_ends"] == 3  # every AI turn ended (with finish: the simulator flags any other ending)
    assert_calls_sound(run, config)
    endpoint = [r for r in run.records if r.get("kind") == "llm_endpoint"][-1]
    # A text-only model: no pictures go (llama-server refuses them; llama-cpp-python drops a list of
    # parts whole, so its text goes as strings).
    assert endpoint["images"] != "sent", endpoint
    if SERVER_KIND == "llama-cpp-python":
        assert endpoint["content"] == "string", endpoint
    assert run.by_model >= 1, [r for r in run.records if r.get("kind") == "decision"]


async def test_forge_decisions_come_from_the_real_model(local_llm: LocalModelServer, tmp_path: Path) -> None:
    # configs/forge-local.yaml: the hosted config's 8 s deadline is shorter than a CPU model's first answer
    config = local("forge", local_llm, tmp_path, for_cpu=True)
    run = await runs.forge(config, games=1, turns=4, seed=11)
    assert run.detail["invalid"] == 0 and run.detail["latency_max_s"] < 25  # Forge's client waits 30 s
    assert run.decisions >= 3 and run.by_model >= 1, run.detail
    assert_calls_sound(run, config)


async def test_a_boardgame_match_is_played_by_the_real_model(local_llm: LocalModelServer, tmp_path: Path) -> None:
    config = local("boardgame", local_llm, tmp_path)
    run = await runs.boardgame(config, matches=1, seed=3)
    assert run.detail["exit"] == 0 and run.detail["finished"] == 1, run.detail
    assert run.by_model >= 1, run.detail
    assert_calls_sound(run, config)


async def test_the_bee_coach_plans_on_the_real_model(local_llm: LocalModelServer, tmp_path: Path) -> None:
    config = local("hive", local_llm, tmp_path, for_cpu=True)
    run = await runs.hive(config, seed=5)
    assert run.detail["forfeit"] is None and run.detail["ending"] == "gameover", run.detail
    assert run.decisions >= 1, run.detail  # the coach asked; the bees never waited for it
    # The model's plan reached the coach (whether a 270M model's plan is usable is the benchmark's question).
    assert any(c["outcome"] == "ok" for c in run.llm_calls()), [c.get("error") for c in run.llm_calls()]
    assert_calls_sound(run, config)
