"""Chat without an LLM: template answers about the plan, and requests that change the next moves."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agent.games.tangram.dialogue.phrases import LANGUAGE_PATH, Glossary, load_phrases
from agent.games.tangram.geometry.collide import CLEARANCE_PX, is_valid
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner import load_library, shapes, silhouette_iou

LIBRARY = load_library()
Board = dict[str, Pose]


def turns(planner: OfflineAgent, objective: str, board: Board, n: int) -> list[str]:
    """Let the planner play ``n`` turns alone; returns its chat lines."""
    lines = []
    for _ in range(n):
        d = planner.play(objective, board)
        lines.append(d.chat)
        if d.pose is not None:
            assert is_valid(d.pose, {k: v for k, v in board.items() if k != d.pose.piece}, CLEARANCE_PX)
            board[d.pose.piece] = d.pose
    return lines


def ask(planner: OfflineAgent, board: Board, message: str, objective: str = "A house") -> str:
    reply = planner.chat(objective, board, message)
    assert reply and "\n" not in reply and len(reply) < 200
    return reply


def test_use_a_piece_for_a_part_is_honoured() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    reply = ask(planner, board, "use Cream for the roof")
    assert "Cream" in reply and "roof" in reply
    turns(planner, "A house", board, 8)
    roof = LIBRARY["house"].slots["Red"]
    assert shapes.placement_error(board["Cream"], roof) < 0.5
    assert shapes.placement_error(board["Red"], LIBRARY["house"].slots["Cream"]) < 0.5
    assert silhouette_iou(board, planner.figure) > 0.99


def test_use_a_piece_for_a_part_it_cannot_be() -> None:
    planner = OfflineAgent(LIBRARY)
    reply = ask(planner, {}, "use Blue for the roof")
    assert "can't" in reply and "large triangle" in reply
    assert planner.state.pins == {}
    assert "no wheel" in ask(planner, {}, "use the square for the wheel")


def test_use_a_piece_for_a_part_after_it_was_built_otherwise() -> None:
    """The roof is already Red: asking for Cream swaps the two large triangles over later turns."""
    planner, board = OfflineAgent(LIBRARY), {}
    turns(planner, "A house", board, 3)  # Cream (wall), Blue, Red (roof)
    ask(planner, board, "Cream should be the roof")
    lines = turns(planner, "A house", board, 9)
    assert shapes.placement_error(board["Cream"], LIBRARY["house"].slots["Red"]) < 0.5
    assert silhouette_iou(board, planner.figure) > 0.99
    assert "complete" in lines[-1]


def test_make_something_else_instead() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    turns(planner, "A house", board, 2)
    reply = ask(planner, board, "make a cat instead")
    assert "cat" in reply
    lines = turns(planner, "A house", board, 12)
    assert planner.figure.name == "cat"
    assert silhouette_iou(board, LIBRARY["cat"]) > 0.99
    assert "cat is complete" in lines[-1]


def test_make_something_unknown() -> None:
    planner = OfflineAgent(LIBRARY)
    reply = ask(planner, {}, "let's make a spoon instead")
    assert "spoon" in reply and "rocket" in reply and "more" in reply
    assert planner.figure.name == "house"


def test_make_something_related_offers_the_nearest_figure() -> None:
    """Another thing than the one named is never built silently: it is offered, and a yes switches."""
    planner = OfflineAgent(LIBRARY)
    reply = ask(planner, {}, "let's make a cow instead")
    assert "cow" in reply and "horse" in reply
    assert planner.figure.name == "house"
    reply = ask(planner, {}, "yes")
    assert "horse" in reply and "instead of a house" in reply
    assert planner.figure.name == "horse"


def test_an_offer_declined_or_ignored_keeps_the_figure() -> None:
    planner = OfflineAgent(LIBRARY)
    ask(planner, {}, "let's make a cow instead")
    assert "keep building a house" in ask(planner, {}, "no")
    ask(planner, {}, "it should be a boat instead")
    ask(planner, {}, "what's next?")
    ask(planner, {}, "yes")  # the offer was not answered at once: it lapsed
    assert planner.figure.name == "house"


def test_move_a_piece_is_honoured_and_kept() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    turns(planner, "A house", board, 2)  # Cream, Blue
    before = board["Blue"]
    assert "Blue" in ask(planner, board, "move Blue left")
    d = planner.play("A house", board)
    assert d.pose is not None and d.pose.piece == "Blue" and "left" in d.chat
    assert d.pose.x == pytest.approx(before.x - 5.0, abs=1.0) and d.pose.y == pytest.approx(before.y, abs=1.0)
    board["Blue"] = d.pose
    turns(planner, "A house", board, 7)
    assert board["Blue"] == d.pose  # not moved back
    assert len(board) == 7


def test_move_a_part_by_name_a_bit() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    turns(planner, "A house", board, 3)
    before = board["Red"]
    ask(planner, board, "move the roof up a bit")
    d = planner.play("A house", board)
    assert d.pose is not None and d.pose.piece == "Red"
    assert d.pose.y == pytest.approx(before.y + 2.0, abs=1.0)


def test_moving_a_piece_still_in_the_drawer_places_it_first_then_moves_it() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    reply = ask(planner, board, "move Brown right")
    assert reply.startswith("Brown is still in the drawer") and "chimney" in reply and "right" in reply
    assert planner.state.pending is None and planner.promised()
    placed = planner.play("A house", board)
    assert placed.pose is not None and placed.pose.piece == "Brown"
    board["Brown"] = placed.pose
    moved = planner.play("A house", board)
    assert moved.pose is not None and moved.pose.piece == "Brown" and moved.pose.x > placed.pose.x
    assert moved.chat == "I moved Brown right, as you asked." and not planner.promised()


def test_turning_a_drawer_piece_asked_in_portuguese_is_promised_and_done_in_portuguese() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    reply = ask(planner, board, "roda o quadrado")
    assert reply.startswith("O quadrado roxo ainda está na gaveta") and "rodo-o" in reply
    turns(planner, "A house", board, 1)
    assert "Purple" in board
    before = board["Purple"]
    d = planner.play("A house", board)
    assert d.pose is not None and d.pose.piece == "Purple" and d.pose.rotation != before.rotation
    assert d.chat.startswith("Rodei o quadrado roxo")


def test_a_drawer_piece_that_cannot_be_placed_next_is_said_so() -> None:
    planner = OfflineAgent(LIBRARY)
    ask(planner, {}, "leave Brown where it is")
    assert "isn't on the board" in ask(planner, {}, "move Brown right")
    assert planner.state.pending is None and planner.state.after_place is None


def test_rotate_a_piece() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    turns(planner, "A house", board, 6)  # Purple (the annex) is out on its own
    ask(planner, board, "rotate purple")
    d = planner.play("A house", board)
    assert d.pose is not None and d.pose.piece == "Purple"
    assert (d.pose.rotation - board["Purple"].rotation) % 360 == pytest.approx(45.0)


def test_what_is_next_matches_the_next_play() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    turns(planner, "A fish", board, 2)
    reply = ask(planner, board, "what's next?", "A fish")
    d = planner.play("A fish", board)
    assert d.pose is not None and d.pose.piece in reply


def test_place_a_piece_next_on_request() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    assert "Green" in ask(planner, board, "could you use the green piece next?")
    d = planner.play("A house", board)
    assert d.pose is not None and d.pose.piece == "Green"


def test_wait_passes_one_turn() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    ask(planner, board, "wait")
    assert planner.play("A house", board).pose is None
    assert planner.play("A house", board).pose is not None


def test_dont_move_my_pieces_is_respected() -> None:
    planner = OfflineAgent(LIBRARY)
    stray = Pose("Yellow", 10.0, 88.0, 90.0)  # far from the house, not in its slot
    board: Board = {"Yellow": stray}
    ask(planner, board, "please don't move my pieces")
    lines = turns(planner, "A house", board, 8)
    assert board["Yellow"] == stray
    assert len(board) == 7 and "leaving your pieces" in lines[-1]


def test_questions_get_template_answers() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    turns(planner, "A house", board, 2)
    assert "house" in ask(planner, board, "what are you building?")
    assert "2 of 7" in ask(planner, board, "how far are we?")
    assert "left wall" in ask(planner, board, "where does Blue go?")
    assert "Hi" in ask(planner, board, "hello!")
    assert "move Blue left" in ask(planner, board, "help")
    assert "My last move" in ask(planner, board, "why did you do that?")
    assert "size" in ask(planner, board, "make it bigger")
    roof = ask(planner, board, "Olá! Podes ajudar-me com o telhado?")  # Portuguese: answered in it
    assert "casa" in roof and "telhado" in roof and planner.last_reply_kind == "for_you", roof


def test_unknown_objective_is_announced_once() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    lines = turns(planner, "A spoon", board, 2)
    assert "don't know" in lines[0] and "spoon" in lines[0] and planner.figure.name in lines[0]
    assert "something else" in lines[0] and "don't know" not in lines[1]


def test_a_related_objective_names_the_nearest_figure_and_invites_steering() -> None:
    planner, board = OfflineAgent(LIBRARY), {}
    line = turns(planner, "A cow", board, 1)[0]
    assert planner.figure.name == "horse"
    assert "no figure for A cow" in line and "nearest I know is a horse" in line and "something else" in line


def test_every_phrase_renders_short_in_each_language() -> None:
    values = {"figure": "rocket", "description": "a rocket pointing up with a nose cone and two fins",
              "piece": "Yellow", "part": "lower tail root", "neighbour": "upper tail root", "blocking": "roof",
              "human_piece": "Cream", "objective": "a very long objective name", "direction": "right",
              "what": "an elephant", "names": ", ".join(LIBRARY.names[:10]), "more": 30, "related": True,
              "placed": 3, "total": 7, "drawer": ["Green", "Brown"], "missing": "a, b, c, d and 3 more",
              "progress": "3 of 7 pieces are in place.", "place": "bottom right", "needed": "parallelogram",
              "kind": "medium triangle", "parts": "left wall, right wall, roof, chimney, annex, floor, floor",
              "last": "I placed Red as the roof.", "x": "12.34", "y": "56.78", "rotation": "45", "action": "place",
              "relation": "to the right of", "anchor": "Cream", "owner": "partner", "previous": "dinosaur",
              "other": "Brown", "on_board": 6, "in_place": False, "mover": "partner", "move": True, "size": "big",
              "nearest": "horse", "facts": "Green is the lower tail root, at the bottom right",
              "next": "Green", "next_part": "upper fin", "pieces": ["Red", "Cream"], "done_parts": ["back", "belly"],
              "own": "lower fin", "same": False, "rest": True, "kept": False, "several": True, "queued": True,
              "intent": "rotate", "greeted": True, "other_part": "upper fin", "other_kind": "large triangle",
              "good": [{"piece": "Cream", "part": "belly"}],
              "off": [{"piece": "Purple", "part": "upper tail root", "place": "right"}],
              "moving": "Purple", "plays_next": "Next I'll place Green as the upper fin.", "question": True,
              "chosen": [{"piece": "Cream", "part": "roof"}, {"piece": "Red", "part": "right wall"}],
              "others": [{"piece": "Blue", "part": "left wall"}], "unplaced": "Cream", "all_on_board": False,
              "ours": ["Red", "Blue"], "theirs": ["Cream"], "plan": "Next I'll place Green as the upper fin.",
              "then": "I'll do the upper fin: next I'll place Green there.", "named": True, "complete": False,
              "steps": [{"piece": "Green", "part": "upper fin"}],
              "for_you": "You could put the purple square as the upper tail root, on the right side of the fish."}
    for lang in ("en", "pt"):
        phrases = load_phrases(lang=lang)
        for group in ("turn", "chat", "hint"):
            for key in phrases.keys(group):
                line = phrases.say(group, key, **{**values, "missing": ["roof", "left wall"]})
                assert line and len(line) < 200, (lang, group, key, line)


def test_a_moved_piece_that_covers_a_slot_does_not_cause_endless_moves() -> None:
    """Blue moved left covers part of the annex's slot: Purple goes as near as it can, once, and
    then the planner passes instead of shuffling pieces for ever."""
    planner, board = OfflineAgent(LIBRARY), {}
    turns(planner, "A house", board, 2)
    ask(planner, board, "move Blue left")
    lines = turns(planner, "A house", board, 10)
    assert len(board) == 7
    moves = [line for line in lines if "Purple" in line]
    assert len(moves) == 1
    assert planner.play("A house", board).pose is None


@pytest.mark.parametrize(("part", "definite", "indefinite", "complete"), [
    ("front paws", "as patas da frente", "umas patas da frente", "completas"),
    ("hind legs", "as pernas traseiras", "umas pernas traseiras", "completas"),
    ("eyes", "os olhos", "uns olhos", "completos"),
    ("upper arms", "os braços superiores", "uns braços superiores", "completos"),
    ("left wall", "a parede esquerda", "uma parede esquerda", "completa"),
    ("roof", "o telhado", "um telhado", "completo"),
])
def test_portuguese_articles_agree_with_a_plural_part_as_with_a_singular_one(
        part: str, definite: str, indefinite: str, complete: str) -> None:
    data = yaml.safe_load(Path(str(LANGUAGE_PATH).format(lang="pt")).read_text(encoding="utf-8"))
    terms = Glossary(data["terms"], data["feminine"], data["modifiers"], data["feminine_forms"])
    assert (terms.definite(part), terms.indefinite(part), terms.complete(part)) == (definite, indefinite, complete)


def test_every_place_in_a_figure_has_its_words_in_each_language() -> None:
    """The Portuguese lines say where a part sits with the glossary's "at the <place>" (set 5 read "at centro")."""
    english = load_phrases(lang="en")
    for lang in ("pt",):
        glossary = load_phrases(lang=lang).glossary
        for place in (p for row in english.words.places for p in row):
            said = glossary.translate(f"at the {place}")
            assert not {"at", "the"} & set(said.split()), (lang, place, said)
