"""The LLM player's own lines (a move or pass without the model's words, a failed decision) are the
conversation's, said in the partner's language (issue 68, item 4)."""

from __future__ import annotations

from agent.core.memory import Memory
from agent.games.tangram.contract import TurnView
from agent.games.tangram.dialogue import partner_line
from agent.games.tangram.llm_player.player import last_partner_language
from agent.games.tangram.protocol import GameState


def view(*said: tuple[str, str]) -> TurnView:
    memory = Memory(8)
    for speaker, text in said:
        memory.add(speaker, text)  # type: ignore[arg-type]
    return TurnView(objective="A house", state=GameState(), memory=memory)


async def test_before_the_partner_says_anything_the_lines_are_in_the_games_language() -> None:
    assert await last_partner_language(view()) == "en"
    assert await last_partner_language(view(("event", "partner moved Red to (50, 50), rotation 0"))) == "en"


async def test_the_partners_last_chat_line_sets_the_language() -> None:
    assert await last_partner_language(view(("player", "can you turn the square?"),
                                            ("player", "podes rodar o quadrado roxo, por favor?"),
                                            ("agent", "Está bem."))) == "pt"
    assert await last_partner_language(view(("player", "podes rodar o quadrado?"),
                                            ("player", "thanks, that looks great"))) == "en"


def test_the_move_lines_name_the_piece_and_part_in_portuguese() -> None:
    assert partner_line("placing_as", "pt", piece="Green", part="tail") == "Vou colocar o triângulo verde como a cauda."
    assert partner_line("placing_as", "en", piece="Green", part="tail") == "I'm placing Green as the tail."
