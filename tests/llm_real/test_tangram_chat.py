"""Tangram chat requests answered through the real local model (Gemma 3 270M on llama-cpp-python):
whatever the model says, the partner reads a line with words in it, in English, that is not a copy
of the prompt or the answer's format; a model reply that is not fit to show is replaced by the
offline planner's answer and a ``chat_replaced`` record keeps it (issue 49). A Portuguese line gets a
Portuguese reply: the model's, or the planner's in its place, never a Portuguese reply replaced for its
language (issue 59)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.local_model import MODEL_ALIAS, LocalModelServer
from agent.core.memory import Memory
from agent.games.tangram.contract import TurnView
from agent.games.tangram.dialogue.language import load_languages
from agent.games.tangram.link.factory import PlayerFactory
from agent.games.tangram.llm_player.replies import degenerate
from agent.games.tangram.protocol import GameState
from benchmarks.llm_real import runs
from benchmarks.tangram.collect_chat_replies import FISH_STATE, MOVERS, Recorder

pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(1200)]
LINES = ("Can you put the red triangle next to my piece", "what is Purple for?", "it should be a boat instead")
PORTUGUESE = ("podes rodar o quadrado roxo, por favor?", "o que estamos a construir?",
              "não mexas nas minhas peças")


async def ask(factory: PlayerFactory, line: str) -> tuple[Recorder, str]:
    """``line`` said to a fresh player on the fish board: its transcript and the reply shown."""
    transcript = Recorder()
    player = factory(transcript)
    memory = Memory(12)
    memory.add("player", line)
    view = TurnView(objective="A fish", state=GameState(on_board=dict(FISH_STATE)), memory=memory,
                    message=line, movers=dict(MOVERS))
    return transcript, await player.chat(view)


async def test_chat_replies_from_the_real_model_are_shown_only_when_fit(local_llm: LocalModelServer,
                                                                         tmp_path: Path) -> None:
    config = runs.localised("tangram", local_llm.base_url, MODEL_ALIAS, tmp_path, local=True)
    factory = PlayerFactory(config)
    for line in LINES:
        transcript, shown = await ask(factory, line)
        assert degenerate(shown, partner=[line]) is None, shown
        calls = [r for r in transcript.records if r["kind"] == "llm" and r.get("purpose") == "chat"]
        assert calls, transcript.records  # the model was asked
        replaced = [r for r in transcript.records if r["kind"] == "chat_replaced"]
        if replaced:  # what the model said is kept, and why it was not shown
            assert replaced[0]["reason"] and replaced[0]["reply"] == shown


async def test_a_portuguese_line_gets_a_portuguese_reply_from_the_real_model_or_in_its_place(
        local_llm: LocalModelServer, tmp_path: Path) -> None:
    config = runs.localised("tangram", local_llm.base_url, MODEL_ALIAS, tmp_path, local=True)
    factory = PlayerFactory(config)
    languages = load_languages()
    for line in PORTUGUESE:
        assert languages.detect(line) == "pt"
        transcript, shown = await ask(factory, line)
        assert languages.detect(shown) == "pt", (line, shown, transcript.records)
        assert degenerate(shown, partner=[line]) is None, shown
        assert [r for r in transcript.records if r["kind"] == "llm" and r.get("purpose") == "chat"]
        for r in transcript.records:
            if r["kind"] == "chat_replaced" and r["model_reply"] and "language" in r["reason"]:
                # replaced for its language: the model's reply was not Portuguese
                assert languages.detect(r["model_reply"]) != "pt", r
