"""The conversation beside the planner: one handler per meaning, the plan seen through a narrow interface."""

from __future__ import annotations

from typing import get_args

import pytest

from agent.games.tangram.dialogue.conversation import HANDLERS, Conversation, Heard, Plan, meaning
from agent.games.tangram.dialogue.requests import Intent
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner import shapes
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
    planner.chat("A human", board, "leave the yellow one, I'll place it myself")  # so it cannot be placed first
    reply = planner.chat("A human", board, line)
    assert planner.last_reply_kind == "wait_ok"
    assert ("pass" in reply) or ("passo" in reply)
    assert planner.play("A human", board).pose is None  # the pass it agreed to


def _fit_parts(planner: OfflineAgent, board: dict) -> dict[str, str]:
    fit = planner.fit(board, commit=False)
    return {p: planner.figure.parts[fit.slot_of[p]] for p in fit.matched}


@pytest.mark.parametrize("line", ["swap the red and cream triangles", "podes trocar o creme com o vermelho?"])
def test_a_swap_of_two_placed_pieces_is_played_one_piece_a_turn(line: str) -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A house", board, 7)
    before = _fit_parts(planner, board)
    assert {"Red", "Cream"} <= set(before)
    reply = planner.chat("A house", board, line)
    assert planner.last_reply_kind == "swap_ok"
    turns(planner, "A house", board, 6)
    after = _fit_parts(planner, board)
    assert (after["Red"], after["Cream"]) == (before["Cream"], before["Red"]), reply
    assert len(after) == 7


def test_a_swap_of_two_pieces_of_different_shapes_is_declined_and_changes_nothing() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A house", board, 2)
    pins = dict(planner.state.pins)
    planner.chat("A house", board, "swap the red and blue ones")
    assert planner.last_reply_kind == "swap_kind" and planner.state.pins == pins


@pytest.mark.parametrize(("line", "kind"), [("wait wait stop", "interrupt_wait"),
                                            ("hold on not that piece", "interrupt_change"),
                                            ("no wait let me do this one", "handover_ok"),
                                            ("para para, essa não é a peça certa", "interrupt_change")])
def test_a_stop_while_the_agent_moves_says_the_move_is_under_way_and_takes_the_line_up(line: str, kind: str) -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A fish", board, 2)
    d = planner.play("A fish", board)  # sent, not yet shown: the line arrives while it lands
    assert d.pose is not None and d.pose.piece not in board
    reply = planner.chat("A fish", board, line)
    assert planner.last_reply_kind == kind
    said = d.pose.piece if planner.state.lang == "en" else planner.lines.names[d.pose.piece]
    assert said in reply.split(".")[0], reply  # the reply opens with the move under way
    assert not reply.endswith("…"), reply  # whole, not cut at the chat line's length
    if kind != "interrupt_change":
        board[d.pose.piece] = d.pose
        assert planner.play("A fish", board).pose is None  # the next turn is passed, as said


def test_a_stop_after_the_move_has_landed_is_a_pass_as_before() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A fish", board, 2)
    planner.chat("A fish", board, "wait wait stop")
    assert planner.last_reply_kind == "wait_ok"


@pytest.mark.parametrize(("line", "direction"), [("thats above it, i meant under", "down"),
                                                 ("no, i meant to the right of it", "right")])
def test_a_correction_of_a_placement_asked_names_the_side_and_is_carried_out(line: str, direction: str) -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A robot", board, 2)
    piece, anchor = next(p for p in ("Purple", "Yellow", "Green") if p not in board), next(iter(board))
    relation = "under" if direction == "down" else "right of"
    planner.chat("A robot", board, f"put {piece} {relation} {anchor}")
    turns(planner, "A robot", board, 1)
    placed = board[piece]
    reply = planner.chat("A robot", board, line)
    assert planner.last_reply_kind == "corrected_move", reply
    turns(planner, "A robot", board, 1)
    (x0, y0), (x1, y1) = shapes.vertex_centroid(placed), shapes.vertex_centroid(board[piece])
    assert (y1 > y0) if direction == "down" else (x1 > x0)  # in pixels: down is a larger y


def test_a_change_and_a_question_in_one_line_are_both_answered() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A fish", board, 1)
    reply = planner.chat("A fish", board, "can you place the purple square and tell me what the brown one is for")
    assert "Purple" in reply and "Brown is the" in reply
    assert planner.state.first == "Purple"


def test_what_the_agent_is_placing_while_its_move_is_under_way_is_that_move() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A rocket", board, 1)
    d = planner.play("A rocket", board)
    assert d.pose is not None
    reply = planner.chat("A rocket", board, "what piece are you putting down?")
    assert planner.last_reply_kind == "playing_now" and d.pose.piece in reply


@pytest.mark.parametrize(("line", "hello"), [("hello :) who goes first", "Hi!"), ("boas, quem começa?", "Olá!"),
                                             ("hi can you place the red one", "Hi!")])
def test_a_line_that_greets_is_greeted_back_and_answered(line: str, hello: str) -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    reply = planner.chat("A cat", board, line)
    assert reply.startswith(hello), reply
    assert planner.last_reply_kind not in ("greeting", "fallback"), reply  # the rest of the line is answered


def test_a_call_for_attention_is_no_greeting() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A cat", board, 2)
    assert not planner.chat("A cat", board, "hey that's my piece dont move it").startswith("Hi")


def test_a_placement_beside_a_piece_in_the_drawer_places_that_piece_first_then_the_one_asked() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    reply = planner.chat("A house", board, "put the small green one next to the square")
    assert planner.last_reply_kind == "place_near_anchor_first" and "Purple" in reply
    first = planner.play("A house", board).pose
    assert first is not None and first.piece == "Purple"
    board["Purple"] = first
    second = planner.play("A house", board)
    assert second.pose is not None and second.pose.piece == "Green"
    assert second.reasoning.startswith("chat request: put Green") and "Purple" in second.reasoning


def test_a_queued_placement_lapses_when_its_anchor_is_not_placed() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    planner.chat("A house", board, "put the small green one next to the square")
    planner.chat("A house", board, "leave the square, I'll place it myself")
    turns(planner, "A house", board, 3)
    assert "Purple" not in board and not planner.state.queued


@pytest.mark.parametrize(("line", "kind"), [("is the square ok as the head?", "idea_agree"),
                                            ("i put the parallelogram as the tail, does it look right?", "idea_kind"),
                                            ("acho que a cabeça devia ser o quadrado, o que achas?", "idea_agree")])
def test_the_partners_idea_of_a_piece_as_a_part_gets_an_opinion_and_no_move(line: str, kind: str) -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    objective = "A cat" if "head" in line or "cabeça" in line else "A fish"
    turns(planner, objective, board, 2)
    first = planner.state.first
    planner.chat(objective, board, line)
    assert planner.last_reply_kind == kind
    assert planner.state.first == first and planner.state.pending is None  # nothing is played for it


def test_an_idea_that_swaps_two_pieces_of_a_kind_is_taken_on() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    reply = planner.chat("A house", board, "i think the cream triangle should be the roof")
    assert planner.last_reply_kind == "idea_ok" and "Cream" in reply and "Red" in reply, reply
    turns(planner, "A house", board, 8)
    assert _fit_parts(planner, board)["Cream"] == "roof"


def test_undo_after_a_move_puts_the_piece_back_where_it_was() -> None:
    planner, board = _built("A house", 5)
    piece = next(p for p in ("Blue", "Green", "Red", "Cream", "Yellow", "Purple", "Brown") if p in board)
    before = board[piece]
    planner.chat("A house", board, f"move {piece} left")
    moved = planner.play("A house", board).pose
    assert moved is not None and moved.piece == piece and moved != before
    board[piece] = moved
    planner.chat("A house", board, "put it back where it was")
    assert planner.last_reply_kind == "undo_ok"
    back = planner.play("A house", board).pose
    assert back is not None and back.piece == piece and shapes.placement_error(back, before) < 1.0
    assert "back where it was" in planner.state.last_line


@pytest.mark.parametrize("line", ["can you undo your last move, i dont like it", "desfaz a tua última jogada"])
def test_undo_of_a_placement_names_the_piece_and_why_it_cannot_go_back(line: str) -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A cat", board, 1)
    last = planner.state.last_piece
    assert last is not None
    reply = planner.chat("A cat", board, line)
    assert planner.last_reply_kind == "undo_from_drawer"
    assert (last if planner.state.lang == "en" else planner.lines.names[last]) in reply


def test_whose_pieces_lists_each_players_pieces() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A cat", board, 1)
    mine = next(iter(board))
    theirs = next(p for p in ("Red", "Cream", "Blue", "Green") if p not in board)
    board[theirs] = planner.figure.slots[theirs]
    reply = planner.chat("A cat", board, "which ones are yours and which are mine?", {mine: "agent", theirs: "partner"})
    assert reply.index(mine) < reply.index(theirs), reply


@pytest.mark.parametrize("line", ["sorry i meant the cream one not red", "ups enganei-me, queria dizer o creme"])
def test_i_meant_another_piece_takes_up_the_last_request_with_that_piece(line: str) -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    planner.chat("A house", board, "place the red one next")
    assert planner.state.first == "Red"
    reply = planner.chat("A house", board, line)
    assert planner.state.first == "Cream", reply
    assert planner.play("A house", board).pose.piece == "Cream"


def test_it_in_the_second_half_of_a_line_is_the_piece_of_the_first() -> None:
    planner, board = _built("A fish", 4)
    named = next(p for p in ("Red", "Cream", "Blue") if p in board and p != planner.state.last_piece)
    planner.chat("A fish", board, f"what is {named} for? and can you turn it")
    assert planner.state.pending is not None and planner.state.pending.piece == named


@pytest.mark.parametrize("line", ["whoa why are you moving that one", "eh pa pq tas a mexer nessa??"])
def test_why_while_the_agents_move_is_under_way_speaks_of_that_move_as_under_way(line: str) -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A house", board, 2)
    d = planner.play("A house", board)  # sent, not yet shown
    assert d.pose is not None
    reply = planner.chat("A house", board, line)
    assert planner.last_reply_kind == "why_now"
    assert (d.pose.piece if planner.state.lang == "en" else planner.lines.names[d.pose.piece]) in reply


def test_never_mind_drops_every_wish_and_the_agent_plays_its_own_plan() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    planner.chat("A house", board, "leave the yellow one, I'll place it myself")
    planner.chat("A house", board, "place the red one next")
    planner.chat("A house", board, "nevermind what i said before, do it your way")
    assert planner.last_reply_kind == "never_mind_ok"
    assert planner.state.first is None and not planner.state.frozen and planner.state.pending is None


@pytest.mark.parametrize(("objective", "line", "theirs"), [
    ("A house", "i made the roof with the red one, you do a wall?", {"Red"}),
    ("A house", "im gonna keep the two small triangles for myself ok?", {"Green", "Yellow"}),
    ("A fish", "fico com o amarelo, o resto podes usar", {"Yellow"}),
    ("A house", "vou fazer as paredes com os triangulos grandes, ok?", {"Red", "Cream"}),
    ("A cat", "fiz a cabeça com o quadrado. e a cauda?", {"Purple"}),
])
def test_pieces_the_partner_says_are_theirs_are_left_to_them_and_the_agent_plays_what_it_said(
        objective: str, line: str, theirs: set[str]) -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    reply = planner.chat(objective, board, line)
    assert planner.last_reply_kind == "claim_ok", reply
    promised = planner.state.first
    first = planner.play(objective, board).pose
    assert first is not None and first.piece not in theirs
    if promised is not None:  # "you do the tail": that part's piece comes next, as the reply said
        assert first.piece == promised
    board[first.piece] = first
    turns(planner, objective, board, 3)
    assert not set(board) & theirs  # nor later


def test_the_part_the_partner_leaves_to_the_agent_is_the_one_it_names() -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    reply = planner.chat("A house", board, "i made the roof with the red one, you do the chimney?")
    fit = planner.fit(board, commit=False)
    chimney = fit.piece_for_slot(next(s for s in planner.figure.order if planner.figure.parts[s] == "chimney"))
    assert planner.last_reply_kind == "claim_ok" and "chimney" in reply and chimney in reply, reply
    assert planner.state.first == chimney


@pytest.mark.parametrize(("line", "also"), [("oh nice where is that one going?", False), ("isso é a porta?", False),
                                            ("ooh are you doing the flame?", True),
                                            ("wait dont put the red one there", False)])
def test_a_question_while_the_agents_move_is_under_way_is_first_about_that_move(line: str, also: bool) -> None:
    planner, board = OfflineAgent(), dict[str, Pose]()
    turns(planner, "A rocket", board, 1)
    d = planner.play("A rocket", board)  # sent, not yet shown
    assert d.pose is not None and d.pose.piece not in ("Brown", "Red")
    reply = planner.chat("A rocket", board, line)
    name = d.pose.piece if planner.state.lang == "en" else planner.lines.names[d.pose.piece]
    assert planner.last_reply_kind != "unclear_question" and reply.count(name) >= 1, reply
    opening = planner.lines.raw("chat", "playing_now", piece=d.pose.piece, part=planner.figure.parts[d.pose.piece])
    assert reply.startswith(opening) and (len(reply) > len(opening)) == also, reply


def test_a_part_the_partner_wants_turned_round_is_turned_on_the_agents_next_turn() -> None:
    planner, board = _built("A house", 3)
    roof = next(p for p, s in planner.fit(board, commit=False).slot_of.items() if planner.figure.parts[s] == "roof")
    assert roof in board
    before = board[roof]
    reply = planner.chat("A house", board, "the roof should point the other way")
    assert planner.last_reply_kind == "fix_round" and roof in reply, reply
    turned = planner.play("A house", board).pose
    assert turned is not None and turned.piece == roof and turned != before
