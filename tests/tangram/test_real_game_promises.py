"""The real-game runner's promise check (benchmarks/tangram/real_game/promises.py), from recorded events:
a constraint holds on its socket, a request for a drawer piece is the next play, replies come in the line's
language."""

from __future__ import annotations

from typing import Any

from benchmarks.tangram.real_game.events import Event
from benchmarks.tangram.real_game.plan import plan
from benchmarks.tangram.real_game.promises import ASK_PIECE, ASKED_PIECE, KEEP_MINE, THANKS, check


def board(*on: str, ws: int = 1, t: float = 0.0) -> Event:
    drawer = {name: {"rotation": 0} for name in ("Red", "Cream", "Blue", "Green", "Yellow", "Purple", "Brown")
              if name not in on}
    return Event(t, "game", "playRequest", msg={"type": "playRequest", "state": {"on_board": {}, "off_board": drawer}},
                 ws=ws)


def line(text: str, ws: int = 1) -> Event:
    return Event(0.0, "game", "chatRequest", msg={"type": "chatRequest", "message": text}, ws=ws)


def said(text: str, ws: int = 1) -> Event:
    return Event(0.0, "agent", "chat", msg={"type": "chat", "message": text}, ws=ws)


def play(shape: str, ws: int = 1) -> Event:
    return Event(0.0, "agent", "play", msg={"type": "play", "shape": shape}, ws=ws)


def drag(shape: str, overlaps: list[str] | None = None) -> Event:
    return Event(0.0, "human", "drag", msg={"shape": shape, "overlaps": [] if overlaps is None else overlaps})


def run(*events: Event) -> Any:
    return check(list(events))


def test_a_constraint_kept_and_a_request_for_a_drawer_piece_played_next() -> None:
    report = run(board(), line(KEEP_MINE), said("OK: I won't move your pieces."), drag("Green"), play("Red"),
                 board("Green", "Red"), line(ASK_PIECE), said("Sim: na minha vez ponho o Castanho."),
                 drag("Yellow"), play(ASKED_PIECE), line(THANKS), said("De nada!"))
    assert report.constraint_kept is True and report.partner_pieces == ["Green", "Yellow"]
    assert report.request_kept is True and report.next_play == ASKED_PIECE
    assert [r.right for r in report.replies] == [True, True, True]
    assert report.summary() == {"constraint_kept": True, "request_kept": True, "replies_in_language": 3,
                                "replies_expected": 3}


def test_moving_a_piece_the_human_placed_after_the_line_breaks_it_but_a_refused_drag_is_not_theirs() -> None:
    report = run(board(), line(KEEP_MINE), said("OK, I will leave your pieces alone."), drag("Green"),
                 drag("Purple", overlaps=["Red"]), play("Purple"), play("Green"))
    assert report.constraint_kept is False and report.moved_after_constraint == ["Green"]


def test_a_request_for_a_piece_already_placed_does_not_apply_and_a_wrong_next_play_is_a_broken_promise() -> None:
    assert run(board("Brown"), line(ASK_PIECE), said("O Castanho já está no tabuleiro."), play("Red")) \
        .request_kept is None
    assert run(board(), line(ASK_PIECE), said("Sim, ponho o Castanho."), play("Red")).request_kept is False


def test_an_english_reply_to_a_portuguese_line_is_wrong_and_a_missing_reply_too() -> None:
    report = run(board(), line(THANKS), said("You're welcome, happy to help with the house!"), line(ASK_PIECE))
    assert [(r.expected, r.lang, r.right) for r in report.replies] == [("pt", "en", False), ("pt", "", False)]


def test_the_requests_plan_says_the_three_lines_before_the_first_turns_and_never_reloads() -> None:
    steps = plan(4, None, "requests")
    assert [s.chat_before for s in steps] == [KEEP_MINE, ASK_PIECE, THANKS, ""]
    assert not any(s.reload or s.undo or s.chat_during for s in steps)
