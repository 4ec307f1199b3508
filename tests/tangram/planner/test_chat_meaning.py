"""The offline chat by meaning: every development table answered right, promises kept on the next
turn, constraints held for the rest of the game and written down, the partner's language kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.planner import load_library
from benchmarks.tangram.bench_chat_phrasings import DEFAULT_TABLES, read_table, scenario, score

LIBRARY = load_library()


@pytest.mark.parametrize("table", DEFAULT_TABLES, ids=[t.name for t in DEFAULT_TABLES])
def test_every_line_of_the_development_tables_is_answered_right(table: Path) -> None:
    rows = read_table(table)
    result = score(rows, LIBRARY)
    assert result.right == len(rows), "\n".join(result.wrong)


def test_the_development_table_covers_the_meanings_languages_and_ways_of_typing() -> None:
    rows = [r for r in read_table(DEFAULT_TABLES[1]) if "intent" in r]  # a few are by reply kind
    assert {r["intent"] for r in rows} >= {"praise", "thanks", "ack", "strategy", "keep_mine", "may_move_mine",
                                           "keep_piece", "unknown_figure", "spatial", "vague_request", "other_language"}
    assert sum(r["lang"] == "pt" for r in rows) >= 20
    assert any(not any(c.isascii() for c in r["say"]) or any(ord(c) > 0x2000 for c in r["say"]) for r in rows)


def test_dont_move_my_pieces_holds_to_the_end_and_is_in_every_decision() -> None:
    game = scenario("fish", LIBRARY)
    game.board["Purple"] = Pose("Purple", 59.743, 56.0, 45.0)  # the partner's piece, near its slot
    reply = game.say("please don't move the pieces I placed")
    assert game.planner.last_reply_kind == "keep_ok" and "rest of the game" in reply
    for _ in range(8):
        d = game.planner.play(game.objective, game.board, game.movers)
        assert d.pose is None or d.pose.piece != "Purple", d.chat
        assert "never move the partner's pieces" in d.reasoning
        if d.pose is not None:
            game.board[d.pose.piece] = d.pose
            game.movers[d.pose.piece] = "agent"
    assert game.board["Purple"] == Pose("Purple", 59.743, 56.0, 45.0)


PROMISE_KINDS = ("keep_ok", "keep_piece_ok", "release_ok", "switch")


@pytest.mark.parametrize("line", [
    "whats the figure again?",  # once "OK, I won't move your pieces" (near "leave the figure as it is")
    "what happens to the pieces i put down?",  # a question about them, no request
    "Perhaps you could add another piece somewhere sensible.",  # once "OK, I'll move any piece"
    "can we make a castle instead",  # a thing the house stands in for: offered, not switched to
    "poe o triangulo amarelo na cauda",  # a place request, once "I'll leave Yellow where it is"
    "can i move yours?",  # asks leave to move the agent's pieces, once "OK, I'll move any piece"
])
def test_no_promise_from_a_line_that_does_not_ask_it(line: str) -> None:
    game = scenario("fish", LIBRARY)
    reply = game.say(line)
    assert game.planner.last_reply_kind not in PROMISE_KINDS, reply
    assert game.planner.figure.name == "fish" and not game.planner.state.keep_human, reply
    assert not game.planner.state.frozen, reply


def test_dont_stop_is_no_request_to_pass() -> None:
    game = scenario("fish", LIBRARY)
    game.say("dont stop")
    assert game.planner.last_reply_kind != "wait_ok"
    assert game.planner.state.skip_turns == 0


def test_a_strategy_agreed_is_the_next_move() -> None:
    game = scenario("empty", LIBRARY)
    reply = game.say("lets start with the small ones")
    piece = next(p for p in ("Green", "Yellow") if p in reply)
    assert game.play() == game.board[piece]


def test_a_portuguese_partner_gets_portuguese_answers_and_turn_lines() -> None:
    game = scenario("fish", LIBRARY)
    reply = game.say("podes rodar o quadrado?")
    assert "quadrado roxo" in reply
    d = game.planner.play(game.objective, game.board, game.movers)
    assert d.pose is not None and d.pose.piece == "Purple" and "Rodei o quadrado roxo" in d.chat
    game.say("thanks!")  # back to English: so are the lines
    assert game.planner.play(game.objective, game.board, game.movers).chat.split()[0] in (
        "I", "Blue", "Green", "Yellow", "Brown", "Cream", "Red", "Purple", "The")


def test_another_language_is_told_so_in_it_and_the_game_goes_on() -> None:
    game = scenario("fish", LIBRARY)
    reply = game.say("¿puedes girar el cuadrado?")
    assert game.planner.last_reply_kind == "other_language" and "inglés" in reply and "English" in reply
    assert game.planner.state.pending is None and game.planner.state.lang == "en"
