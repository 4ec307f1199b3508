"""The offline chat by meaning: every development table answered right, promises kept on the next
turn, constraints held for the rest of the game and written down, the partner's language kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.games.tangram.dialogue.phrases import load_phrases
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


@pytest.mark.parametrize(("line", "kind"), [
    ("nope", "no"), ("gotcha", "ack"), ("hvala", "other_language"), ("teşekkürler", "other_language"),
])
def test_a_line_of_unknown_words_is_another_language_unless_it_reads_as_english(line: str, kind: str) -> None:
    game = scenario("fish", LIBRARY)
    reply = game.say(line)
    assert (game.planner.last_reply_kind == "other_language") == (kind == "other_language"), reply
    if kind == "other_language":
        assert "English or Portuguese" in reply and "inglês ou português" in reply


@pytest.mark.parametrize(("line", "scene", "thing", "figure"), [
    ("can we make a castle instead?", "empty", "castle", "house"),
    ("actually I'd rather do a whale", "fish", "whale", "fish"),
    ("da pra transformar numa igreja?", "empty", "uma igreja", "casa"),
])
def test_a_figure_the_library_only_stands_in_for_is_not_known_and_the_nearest_is_built(
        line: str, scene: str, thing: str, figure: str) -> None:
    game = scenario(scene, LIBRARY)
    reply = game.say(line)
    assert game.planner.last_reply_kind == "unknown_figure" and thing in reply and figure in reply, reply
    assert "Yes, we're making" not in reply and game.planner.state.offer is None


def test_whose_pieces_move_is_answered_from_what_happened_and_what_was_asked() -> None:
    game = scenario("fish", LIBRARY)
    assert game.say("can I move yours?").startswith("Yes: you can move any piece")
    assert game.say("did you move my square?") == "No: you moved Purple last."
    assert "say 'don't move my pieces'" in game.say("are you going to move my pieces?")
    assert game.planner.state.keep_human is False  # a question promises nothing
    game.say("don't move my pieces")
    assert game.say("are you going to move my pieces?").startswith("No: you asked me not to")
    game.movers["Purple"] = "agent"
    assert game.say("did you move my square?") == "Yes: I moved Purple last."
    assert game.say("mexeste no meu quadrado?").startswith("Sim: fui eu")


def test_leave_the_rest_to_me_passes_every_turn_until_asked_to_play_again() -> None:
    game = scenario("fish", LIBRARY)
    reply = game.say("leave the rest to me")
    assert game.planner.last_reply_kind == "handover_ok" and "until you ask me to play again" in reply
    assert not game.planner.state.keep_human  # no constraint on the partner's pieces is read into it
    assert [game.play() for _ in range(3)] == [None, None, None]
    game.say("your turn")
    assert game.play() is not None


def test_let_me_do_the_next_one_passes_one_turn() -> None:
    game = scenario("fish", LIBRARY)
    assert game.say("deixa-me fazer a proxima").startswith("Está bem, é contigo: passo a minha próxima vez")
    assert game.play() is None and game.play() is not None


@pytest.mark.parametrize(("line", "piece"), [
    ("not the square, the parallelogram", "Brown"),
    ("nao o quadrado, o paralelogramo", "Brown"),
    ("hi! could you place the yellow triangle?", "Yellow"),
    ("oi! podes por o triangulo amarelo?", "Yellow"),
    ("can u use one of the tiny triangles as the eye", "Green Yellow"),  # the house has no eye; that piece next
])
def test_the_piece_meant_is_played_next(line: str, piece: str) -> None:
    game = scenario("empty", LIBRARY)
    reply = game.say(line)
    pose = game.play()
    assert pose is not None and pose.piece in piece.split(), reply
    assert pose.piece in reply or load_phrases(lang="pt").names[pose.piece] in reply, reply


@pytest.mark.parametrize(("line", "kind"), [
    ("nas minhas peças ninguém toca", "keep_ok"),  # the nearest examples once read it as leave to move them
    ("tranquilo se mexeres nas minhas pecas", "release_ok"),
    ("whatever I put down stays where I put it", "keep_ok"),
    ("only move your own pieces please", "keep_ok"),
])
def test_whether_the_partner_keeps_or_releases_their_pieces_follows_the_words_that_say_so(line: str, kind: str) -> None:
    game = scenario("fish", LIBRARY)
    reply = game.say(line)
    assert game.planner.last_reply_kind == kind, reply
    assert game.planner.state.keep_human is (kind == "keep_ok")


@pytest.mark.parametrize("line", ["no complaints here, that roof is spot on", "nada mal mesmo",
                                  "honestly couldn't have done it better myself"])
def test_praise_said_through_a_negation_is_praise(line: str) -> None:
    game = scenario("done", LIBRARY)
    game.say(line)
    assert game.planner.last_reply_kind == "praise"


@pytest.mark.parametrize(("line", "pieces", "said"), [
    ("you do the walls and I'll do the roof", {"Red"}, "the roof is yours"),
    ("eu faço as paredes", {"Cream", "Blue"}, "as paredes ficam contigo"),
])
def test_a_part_the_partner_takes_is_left_to_them_for_the_rest_of_the_game(line: str, pieces: set[str],
                                                                           said: str) -> None:
    game = scenario("empty", LIBRARY)
    reply = game.say(line)
    assert game.planner.last_reply_kind == "strategy_theirs" and said in reply, reply
    played = {pose.piece for pose in (game.play() for _ in range(8)) if pose is not None}
    assert played and not played & pieces
    assert all(f"leave {p} where it is" in game.planner.constraints() for p in pieces)
