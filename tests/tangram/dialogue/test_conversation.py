"""The conversation beside the planner: one handler per meaning, the plan seen through a narrow interface."""

from __future__ import annotations

from typing import get_args

import pytest

from agent.games.tangram.dialogue.conversation import HANDLERS, Conversation, Heard, Plan, meaning
from agent.games.tangram.dialogue.requests import Intent
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.offline.agent import OfflineAgent
from tests.tangram.dialogue.test_chat import turns

NOT_ANSWERED_BY_A_HANDLER = {"other", "other_language"}
""""other": the question or fallback line; "other_language": answered before any handler, in that language."""


def test_every_meaning_has_one_handler() -> None:
    assert set(HANDLERS) == set(get_args(Intent)) - NOT_ANSWERED_BY_A_HANDLER


def test_a_meaning_declared_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="two handlers"):
        @meaning("thanks")
        def again(c: Conversation, h: Heard) -> str | None:
            return None


def test_the_planner_is_a_plan_and_holds_its_conversation() -> None:
    planner = OfflineAgent()
    plan: Plan = planner
    assert planner.conversation.plan is plan
    assert not isinstance(planner, Conversation)


def test_a_handler_that_cannot_answer_leaves_the_line_to_the_fallback() -> None:
    planner = OfflineAgent()
    planner.chat("A fish", {}, "yes")  # no offer is open: "yes" has nothing to accept
    assert planner.last_reply_kind in ("fallback", "unclear_question", "ack")
    planner.chat("A fish", {}, "thank you!")
    assert planner.last_reply_kind == "thanks"


def _one_turn(planner: OfflineAgent, objective: str) -> tuple[dict, dict]:
    board: dict = {}
    movers: dict = {}
    d = planner.play(objective, board, movers)
    assert d.pose is not None
    board[d.pose.piece], movers[d.pose.piece] = d.pose, "agent"
    return board, movers


@pytest.mark.parametrize("line", ["porque é que mexeste nessa peça?", "não, está mal"])
def test_a_portuguese_question_about_an_english_turn_line_is_answered_in_portuguese(line: str) -> None:
    planner = OfflineAgent()
    board, movers = _one_turn(planner, "A fish")
    assert planner.state.last_line.startswith("I'm starting")
    reply = planner.chat("A fish", board, line, movers)
    assert "A minha última jogada: Pus o triângulo vermelho" in reply
    assert "I'm" not in reply and "Red" not in reply


def test_an_english_question_quotes_the_english_turn_line() -> None:
    planner = OfflineAgent()
    board, movers = _one_turn(planner, "A fish")
    reply = planner.chat("A fish", board, "why did you do that?", movers)
    assert reply == "My last move: " + planner.state.last_line


def test_an_english_question_about_a_portuguese_turn_line_is_answered_in_english() -> None:
    planner = OfflineAgent()
    planner.chat("A fish", {}, "olá, vamos começar pelas peças grandes")
    board, movers = _one_turn(planner, "A fish")
    assert "triângulo" in planner.state.last_line
    reply = planner.chat("A fish", board, "why did you move that piece?", movers)
    assert "triângulo" not in reply and reply.startswith("My last move: I placed ")


@pytest.mark.parametrize(("correction", "lang", "words"), [
    ("I said beside, not on top", "en", ["Blue", "Purple", "which side"]),
    ("eu disse ao lado, não em cima", "pt", ["triângulo azul", "quadrado roxo", "de que lado"]),
])
def test_a_correction_of_a_placement_it_made_takes_up_the_request_again(correction: str, lang: str,
                                                                        words: list[str]) -> None:
    """'I said beside, not on top' after the agent put Blue beside Purple as asked: the reply owns the
    mistake, names the request it carried out and asks the side, instead of saying it did as asked."""
    planner = OfflineAgent()
    board: dict[str, Pose] = {}
    first = planner.play("A robot", board).pose
    assert first is not None
    board[first.piece] = first
    fit = planner.fit(board, commit=False)
    if "Purple" not in board:
        board["Purple"] = fit.targets["Purple"]
    planner.chat("A robot", board, "put Blue beside Purple" if lang == "en" else "põe o azul ao lado do roxo")
    placed = planner.play("A robot", board)
    assert placed.pose is not None and placed.pose.piece == "Blue"
    board["Blue"] = placed.pose
    reply = planner.chat("A robot", board, correction)
    assert planner.last_reply_kind == "corrected_place"
    assert all(w in reply for w in words), reply


def test_a_correction_with_no_request_carried_out_is_a_disagreement() -> None:
    planner = OfflineAgent()
    board: dict[str, Pose] = {}
    d = planner.play("A robot", board).pose
    assert d is not None
    board[d.piece] = d
    planner.chat("A robot", board, "I said beside, not on top")
    assert planner.last_reply_kind == "disagree"


def _built(objective: str, n: int) -> tuple[OfflineAgent, dict[str, Pose]]:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, objective, board, n)
    return planner, board


def test_two_changes_in_one_line_are_played_one_a_turn_in_their_order() -> None:
    planner, board = _built("A house", 5)
    first, second = [p for p in ("Blue", "Green", "Red", "Cream", "Yellow", "Purple", "Brown") if p in board][:2]
    reply = planner.chat("A house", board, f"move {first} left and turn {second}")
    assert first in reply and second in reply and "turn after" in reply
    moved = planner.play("A house", board).pose
    assert moved is not None and moved.piece == first and moved.x < board[first].x
    board[first] = moved
    turned = planner.play("A house", board).pose
    assert turned is not None and turned.piece == second and turned.rotation != board[second].rotation


@pytest.mark.parametrize("line", ["move the brown piece next to the yellow one and then stop for a turn",
                                  "põe o castanho ao lado do amarelo e depois espera uma jogada"])
def test_when_the_first_of_two_changes_cannot_be_made_the_second_is_answered_too(line: str) -> None:
    planner, board = _built("A human", 1)
    board.pop("Yellow", None)
    reply = planner.chat("A human", board, line)
    assert planner.last_reply_kind == "wait_ok"
    assert ("pass" in reply) or ("passo" in reply)
    assert planner.play("A human", board).pose is None  # the pass it agreed to
