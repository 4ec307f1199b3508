"""Which model chat lines may be shown to the partner (players/replies.py)."""

from __future__ import annotations

import pytest

from agent.games.tangram.llm_player.replies import (
    contradicts_move,
    degenerate,
    false_claim,
    partner_language,
    silent_on_move,
)

PROMPT = ['Your partner wrote in the chat: "move blue left"\nObjective: "A fish".\nReply to your partner in '
          'one or two short, friendly sentences, as a collaborator: suggest, do not order.']


@pytest.mark.parametrize("reply", ["", "   ", "...", "?!", "…", "-", "a", '{"reply": "..."}', '{"reply": "Sure"}',
                                   "reply", "Reply", "JSON", "<your message>", "{{ reply }}", '"reply": "ok"',
                                   "move blue left", "Move Blue left!",
                                   "Your partner wrote in the chat: move blue left",
                                   "Reply to your partner in one or two short friendly sentences",
                                   "好的，我会把蓝色向左移动。", "Хорошо, я передвину синий налево.",
                                   "Claro, vou mover o azul para a esquerda.",
                                   "Vale, muevo la pieza azul a la izquierda.",
                                   "D'accord, je vais déplacer le triangle bleu à gauche."])
def test_degenerate_lines_are_not_shown(reply: str) -> None:
    assert degenerate(reply, partner=["move blue left"], prompt=PROMPT) is not None


@pytest.mark.parametrize("reply", ["OK!", "Sure, I'll move Blue left on my turn.", "Done soon!",
                                   "Good idea: Blue goes left of Red next turn.",
                                   "I'm placing Brown as the fin.", "Purple is the eye of the fish.",
                                   "Thanks! The fish needs a tail: I'll add Green there.", "I <3 this fish",
                                   "Left it is. I'll shift Blue a bit on my next turn."])
def test_sound_lines_are_shown(reply: str) -> None:
    assert degenerate(reply, partner=["move blue left"], prompt=PROMPT) is None


def test_the_partners_own_language_is_fine_and_english_only_where_the_offline_answer_is_not_theirs() -> None:
    partner = ["podes mover o azul para a esquerda, por favor?"]
    assert partner_language(partner) == "pt"
    assert degenerate("Claro, vou mover o azul para a esquerda na minha vez.", partner=partner) is None
    # The offline answer speaks Portuguese: it replaces an English reply to a Portuguese line.
    assert degenerate("Sure, I'll move Blue left on my turn.", partner=partner) == \
        "English, not the partner's language (pt)"
    assert degenerate("OK!", partner=partner) is None  # too short to tell
    spanish = ["¿puedes mover el triángulo azul a la izquierda, por favor?"]
    assert degenerate("Sure, I'll move Blue left on my turn.", partner=spanish) is None  # no Spanish answer to give
    assert degenerate("好的，我会把蓝色向左移动。", partner=partner) is not None
    assert partner_language(["ok"]) == "en"  # too short to tell: the game's language


@pytest.mark.parametrize(("line", "reply"), [
    ("podes rodar o quadrado?", "Claro, vou rodar o quadrado roxo na minha vez."),
    ("roda o azul", "Está bem, rodo o triângulo azul na minha próxima vez."),
    ("obrigado!", "De nada! Estamos quase a acabar o peixe."),
    ("não mexas nas minhas peças", "Combinado, não vou mexer nas tuas peças até ao fim."),
])
def test_a_portuguese_reply_to_a_portuguese_line_is_shown_however_short_the_line(line: str, reply: str) -> None:
    assert partner_language([line]) == "pt"
    assert degenerate(reply, partner=[line]) is None
    assert degenerate(reply, partner=["move blue left", line]) is None  # the line answered decides
    assert degenerate("Vale, giro el cuadrado morado en mi turno.", partner=[line]) is not None


@pytest.mark.parametrize(("line", "piece", "silent"), [
    ("A cat with a partner.", "Cream", True),  # the local model on the real game (local-s3, turn 3)
    ("Building the chest now!", "Cream", True),
    ("I put cream under the roof.", "Cream", False),
    ("Placing the medium triangle now.", "Blue", False),
    ("Two triangles make the ears.", "Green", False),
    ("The square is the head.", "Purple", False),
    ("The square is the head.", "Brown", True),
])
def test_a_move_line_must_say_what_moved(line: str, piece: str, silent: bool) -> None:
    assert silent_on_move(line, piece) == silent


def test_a_move_line_must_not_name_only_other_pieces() -> None:
    assert contradicts_move("I put Red on top as the roof.", "Blue")
    assert not contradicts_move("I put Blue under Red.", "Blue")
    assert not contradicts_move("Placing the medium triangle now.", "Blue")


def test_a_reply_must_not_claim_moves_or_owners_that_are_false() -> None:
    movers = {"Cream": "agent", "Red": "agent", "Purple": "partner"}
    assert false_claim("I placed Blue next to Purple.", movers)  # Blue is in the drawer
    assert false_claim("I moved Purple up.", movers)  # the partner moved Purple last
    assert false_claim("Your Red was where the belly goes.", movers)  # the case: the agent's own Red
    assert false_claim("My Purple is the eye.", movers)
    assert false_claim("I put Red on top as the roof.", movers) is None
    assert false_claim("I will put Blue next to your Purple on my turn.", movers) is None
    assert false_claim("I placed Blue next to Purple.", {}) is None  # no ledger: nothing judged
