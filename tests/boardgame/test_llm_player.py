"""The LLM player through the real openai SDK against the fake server: prompts, retries, chaos."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from agent.core.config import LLMConfig, RetryConfig
from agent.core.llm import LLMClient
from agent.core.prompts import PromptSet
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.boardgame.client import ClientSettings, MatchClient
from agent.games.boardgame.config import BoardgameConfig
from agent.games.boardgame.players.base import Turn
from agent.games.boardgame.players.llm import LLMPlayer, parse_reply, prompt_context, reply_schema
from agent.games.boardgame.players.offline import make_offline
from agent.games.boardgame.rules.base import GameRules
from agent.games.boardgame.rules.registry import get_rules
from agent.games.boardgame.templates import load_templates
from agent.games.boardgame.testing import chaotic_responder, legal_moves_in, legal_responder
from tests.boardgame.support import running_engine

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts" / "boardgame"


def prompts() -> PromptSet:
    return load_templates(BoardgameConfig(prompts_dir=PROMPTS_DIR))


def llm_client(fake: FakeOpenAI, timeout: float = 2.0) -> LLMClient:
    config = LLMConfig(base_url=fake.base_url, model="fake-model", api_key_required=False, request_timeout=timeout,
                       retry=RetryConfig(max_attempts=2, initial_backoff=0.01, max_backoff=0.02))
    return LLMClient(config, None)


def fallback(rules: GameRules[Any]) -> Any:
    return make_offline("best", rules, random.Random(0), seconds=0.02)


def test_the_prompt_shows_rules_board_marks_and_legal_moves() -> None:
    rules = get_rules("connect_four")
    position = rules.play(rules.initial(), 3)
    context = prompt_context(Turn(rules, position, 1, 2, ("drop {'column': 9} was refused: too far",)), "RULES")
    templates = prompts()
    system = templates.render("system", context)
    turn = templates.render("turn", context)
    assert "Connect four as O against an opponent playing X" in system and "RULES" in system
    assert rules.render(position) in turn
    assert "Legal moves:\n- column 1\n- column 2\n" in turn and "too far" in turn
    assert '"move": then the move, written exactly as one of the listed legal moves, e.g. "column 1"' in system
    assert "four discs in a line" in templates.render("rules_connect_four", {})


def test_the_reply_schema_is_strict_mode_compatible_and_names_only_legal_moves() -> None:
    for game in ("tictactoe", "connect_four"):
        schema = reply_schema(get_rules(game))
        assert schema["additionalProperties"] is False and schema["required"] == list(schema["properties"])
        assert list(schema["properties"]) == ["reasoning", "move"]
    ttt = get_rules("tictactoe")
    position = ttt.play(ttt.play(ttt.initial(), 4), 0)
    enum = reply_schema(ttt, position)["properties"]["move"]["enum"]
    assert len(enum) == 7 and "row 2 column 2" not in enum and "row 1 column 1" not in enum
    c4 = get_rules("connect_four")
    full = c4.initial()
    for _ in range(6):
        full = c4.play(full, 0)
    assert reply_schema(c4, full)["properties"]["move"]["enum"] == [f"column {c}" for c in range(2, 8)]


@pytest.mark.parametrize("data, words", [
    (None, "not a JSON object"),
    ({"move": "row 2 column 2"}, "'row 2 column 2' is not one of the legal moves"),
    ({"move": 5}, "must be one of the legal moves"),
    ({"reasoning": "no move"}, "must be one of the legal moves"),
])
def test_unusable_replies_are_explained(data: Any, words: str) -> None:
    from agent.games.boardgame.players.base import InvalidChoice
    from agent.games.boardgame.players.llm import move_labels

    rules = get_rules("tictactoe")
    position = rules.play(rules.initial(), 4)
    with pytest.raises(InvalidChoice, match=words):
        parse_reply(data, "text", rules, move_labels(rules, position))


def test_a_listed_move_becomes_its_action_and_the_free_form_is_still_read() -> None:
    from agent.games.boardgame.players.llm import move_labels

    rules = get_rules("tictactoe")
    labels = move_labels(rules, rules.initial())
    assert parse_reply({"reasoning": "corner", "move": "row 3 column 1"}, "", rules, labels).data == {
        "row": 3, "column": 1}
    # A model that ignored the list and answered in the free form: the client checks it like any action.
    assert parse_reply({"type": "place", "data": {"row": 9, "column": 9}}, "", rules, labels).data == {
        "row": 9, "column": 9}


async def test_a_legal_llm_plays_a_whole_match_with_structured_output(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = legal_responder(random.Random(1))
    client = llm_client(fake_openai)
    player = LLMPlayer(client, prompts())
    async with running_engine(games=("connect_four",), bot="random", seed=1) as (_engine, url):
        result = await MatchClient(ClientSettings(url=url, agent_id="L", poll_seconds=1.0),
                                   lambda rules: player, fallback).play()
    await client.aclose()
    assert result.status == "ended" and result.illegal == 0 and result.fallbacks == 0
    first = fake_openai.chat_requests[0]
    assert first.response_format_type == "json_schema"
    schema = first.json["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["move"]["enum"] == [f"column {c}" for c in range(1, 8)]
    assert len(legal_moves_in(first.json)) == 7


async def test_an_unlisted_answer_is_retried_with_the_reason_in_the_prompt(fake_openai: FakeOpenAI) -> None:
    reply = {"reasoning": "centre", "move": "row 2 column 2"}
    fake_openai.enqueue(FakeReply.ok_json(reply))  # our first move: the centre
    fake_openai.responder = lambda request: FakeReply.ok_json(  # then the centre again, then a listed move
        reply if "refused" not in request["messages"][-1]["content"] else
        {"reasoning": "free", "move": legal_moves_in(request)[0]})
    client = llm_client(fake_openai)
    async with running_engine(games=("tictactoe",), bot="strong", seed=2) as (_engine, url):
        result = await MatchClient(ClientSettings(url=url, agent_id="L", poll_seconds=1.0),
                                   lambda rules: LLMPlayer(client, prompts()), fallback).play()
    await client.aclose()
    retried = [r for r in fake_openai.chat_requests if "refused" in r.messages[-1]["content"]]
    assert retried, "the second turn's refusal must reach the next prompt"
    assert "'row 2 column 2' is not one of the legal moves" in retried[0].messages[-1]["content"]
    assert result.status == "ended" and result.illegal >= 1


async def test_a_chaotic_llm_finishes_every_match_with_no_protocol_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = chaotic_responder(random.Random(7), stall_seconds=1.0)
    client = llm_client(fake_openai, timeout=1.5)
    outcomes = []
    async with running_engine(games=("tictactoe", "connect_four"), bot="strong", seed=7,
                              bot_search_seconds=0.02) as (_engine, url):
        for index in range(6):
            game = ("tictactoe", "connect_four")[index % 2]
            settings = ClientSettings(url=url, agent_id=f"L{index}", game=game, poll_seconds=1.0, max_attempts=3,
                                      decision_seconds=0.5, create_settings={"seat": 1 + index % 2})
            result = await MatchClient(settings, lambda rules: LLMPlayer(client, prompts()), fallback).play()
            assert result.status == "ended", result.line()
            assert result.protocol_errors == 0
            outcomes.append(result)
    await client.aclose()
    decisions = [d for r in outcomes for d in r.decisions]
    # Provider failures hand the turn to the offline player; legal picks are the model's moves.
    assert any(d.fallback for d in decisions) and any(not d.fallback for d in decisions)
    assert all(1 <= d.attempts <= 3 for d in decisions)


def test_chaos_covers_each_kind_of_misbehaviour() -> None:
    from agent.games.boardgame.players.llm import reply_schema

    respond = chaotic_responder(random.Random(0))
    request = {"messages": [{"role": "system", "content": "rules"},
                            {"role": "user", "content": "Legal moves:\n- column 1\n- column 2\n"}],
               "response_format": {"type": "json_schema", "json_schema": {
                   "name": "x", "schema": reply_schema(get_rules("connect_four"))}}}
    replies = [respond(request) for _ in range(400)]
    assert {r.status for r in replies} >= {200, 400, 500}
    assert any(r.drop for r in replies) and any(r.truncate for r in replies) and any(r.delay for r in replies)
    bodies = [r.content for r in replies if r.content and r.content.startswith("{") and r.finish_reason == "stop"]
    assert any(r.finish_reason == "length" for r in replies)
    legal = [b for b in bodies if json.loads(b).get("move") in {f"column {c}" for c in range(1, 8)}]
    assert 0.4 < len(legal) / len(replies) < 0.75  # half legal picks, plus stalls and long reasoning
    assert any(json.loads(b).get("move") == "row 9 column 99" for b in bodies)
    assert any(r.content and not r.content.startswith(("{", "[")) for r in replies)


def _board_reply(request: dict[str, Any], rng: random.Random) -> FakeReply:
    """A model reading the raw state JSON of the text mode; its first answer each turn uses a wrong key."""
    content = request["messages"][-1]["content"]
    state = json.loads(content.split("```json", 1)[1].split("```", 1)[0])
    free = [{"row": r + 1, "column": c + 1} for r, row in enumerate(state["board"]) for c, ch in enumerate(row)
            if ch == "."]
    if "refused" not in content:
        return FakeReply.ok_json({"reasoning": "guess", "type": "place", "data_json": '{"cell": 5}'})
    return FakeReply.ok_json({"reasoning": "free", "type": "place", "data_json": json.dumps(rng.choice(free))})


async def test_a_game_without_a_plugin_is_played_from_its_rules_text(fake_openai: FakeOpenAI) -> None:
    rng = random.Random(3)
    fake_openai.responder = lambda request: _board_reply(request, rng)
    client = llm_client(fake_openai)
    async with running_engine(games=("tictactoe",), bot="random", seed=3) as (_engine, url):
        match = MatchClient(ClientSettings(url=url, agent_id="T", poll_seconds=1.0), lambda rules: fallback(rules),
                            fallback, text_player=lambda game: LLMPlayer(client, prompts()),
                            known_rules=lambda game: None)
        result = await match.play()
    await client.aclose()
    assert result.status == "ended" and result.protocol_errors == 0 and result.mark == "X"
    assert result.illegal == len(result.decisions) and result.fallbacks == 0
    first = fake_openai.chat_requests[0]
    assert 'the board game "tictactoe"' in first.messages[0]["content"]
    assert "three marks in a row" in first.messages[0]["content"]  # rules_tictactoe.j2
    assert first.json["response_format"]["json_schema"]["schema"]["required"] == ["reasoning", "type", "data_json"]
    retry = fake_openai.chat_requests[1].messages[-1]["content"]
    assert "The engine lists these legal actions" in retry and "data.row must be a whole number" in retry


async def test_without_a_plugin_or_an_llm_the_game_is_refused_clearly() -> None:
    async with running_engine(games=("tictactoe",), bot="random") as (_engine, url):
        match = MatchClient(ClientSettings(url=url, agent_id="T"), fallback, fallback, known_rules=lambda game: None)
        with pytest.raises(Exception, match="has no rules for the game 'tictactoe'"):
            await match.play()


def test_text_replies_are_parsed_or_explained() -> None:
    from agent.games.boardgame.players.base import InvalidChoice
    from agent.games.boardgame.players.llm import parse_text_reply

    assert parse_text_reply({"type": "drop", "data_json": '{"column": 3}'}, "").data == {"column": 3}
    assert parse_text_reply({"type": "drop", "data_json": {"column": 3}}, "").data == {"column": 3}
    for bad in ({"type": "drop", "data_json": "[3]"}, {"type": "", "data_json": "{}"}, {"data_json": "{}"}):
        with pytest.raises(InvalidChoice):
            parse_text_reply(bad, "")


def test_the_prompt_names_winning_and_losing_moves() -> None:
    rules = get_rules("connect_four")
    position = rules.initial()
    for move in (0, 6, 1, 6, 2):  # X holds columns 1-3 of the bottom row; O has two in column 7
        position = rules.play(position, move)
    o_turn = prompts().render("turn", prompt_context(Turn(rules, position, 1, 6), "RULES"))
    assert "These moves win at once" not in o_turn
    # Whatever O plays except column 4, X wins at column 4.
    assert "opponent can win at once, so avoid them if you can: column 1, column 2, column 3, column 5" in o_turn
    position = rules.play(position, 6)  # O ignores the threat
    x_turn = prompts().render("turn", prompt_context(Turn(rules, position, 0, 7), "RULES"))
    assert "These moves win at once: column 4." in x_turn


async def test_llm_calls_per_match_are_capped_then_the_offline_player_plays(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = legal_responder(random.Random(2))
    client = llm_client(fake_openai)
    player = LLMPlayer(client, prompts(), max_calls=2)
    async with running_engine(games=("connect_four",), bot="random", seed=2) as (_engine, url):
        result = await MatchClient(ClientSettings(url=url, agent_id="L", poll_seconds=1.0),
                                   lambda rules: player, fallback).play()
    await client.aclose()
    assert len(fake_openai.chat_requests) == 2 and player.calls == 2
    assert result.status == "ended" and result.fallbacks == len(result.decisions) - 2


async def test_an_unreadable_reply_is_another_attempt_with_the_reason_fed_back(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.ok("I would play the centre."))  # the model answered, but not in JSON
    fake_openai.responder = legal_responder(random.Random(4))
    client = llm_client(fake_openai)
    async with running_engine(games=("tictactoe",), bot="random", seed=4) as (_engine, url):
        result = await MatchClient(ClientSettings(url=url, agent_id="L", poll_seconds=1.0),
                                   lambda rules: LLMPlayer(client, prompts()), fallback).play()
    await client.aclose()
    first = result.decisions[0]
    assert first.attempts == 2 and first.illegal == 1 and not first.fallback
    retry = fake_openai.chat_requests[1].messages[-1]["content"]
    assert "your reply could not be read: reply is not a JSON object" in retry
