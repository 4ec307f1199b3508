"""Telling the partner's language and reading Portuguese through its gloss (planner/language.py)."""

from __future__ import annotations

import pytest

from agent.games.tangram.planner.language import fold, load_languages

LANGUAGES = load_languages()


@pytest.mark.parametrize(("line", "lang"), [
    ("podes rodar o quadrado?", "pt"),
    ("obrigado!", "pt"),
    ("não mexas nas minhas peças", "pt"),
    ("vamos começar pelas peças grandes", "pt"),
    ("ok", "en"),
    ("lol", "en"),
    ("move blue left", "en"),
    ("please don't move the pieces I placed", "en"),
    ("the weather is nice today", "en"),
    ("¿puedes girar el cuadrado?", "es"),
    ("peux-tu tourner le carré ?", "fr"),
    ("kannst du das Quadrat drehen?", "de"),
    ("puoi spostare il pezzo rosso a sinistra?", "it"),
])
def test_each_line_gets_its_language(line: str, lang: str) -> None:
    assert LANGUAGES.detect(line) == lang


def test_only_english_and_portuguese_are_answered() -> None:
    assert LANGUAGES.answered("en") and LANGUAGES.answered("pt") and not LANGUAGES.answered("es")
    assert "inglés" in LANGUAGES.other_language_line("es")
    assert "English" in LANGUAGES.other_language_line("ja")  # no line of its own: the default


@pytest.mark.parametrize(("line", "gloss"), [
    ("podes rodar o quadrado?", "can you rotate the square"),
    ("não mexas nas minhas peças", "dont move my pieces"),
    ("põe o amarelo à esquerda", "put the yellow left"),
    ("não", "no"),
])
def test_a_portuguese_line_is_read_in_the_planners_words(line: str, gloss: str) -> None:
    assert LANGUAGES.gloss(line) == gloss


def test_emoji_are_read_as_words_and_accents_fold() -> None:
    assert LANGUAGES.plain("👍").strip() == "ok"
    assert fold("Peça à DIREITA") == "peca a direita"
