"""Telling the partner's language and reading Portuguese through its gloss (planner/language.py)."""

from __future__ import annotations

import pytest

from agent.games.tangram.dialogue.language import fold, load_languages

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
    ("n toques no q eu pus", "pt"),  # chat abbreviations: no marker but "toques"
    ("agradeço", "pt"),  # no marker, no English word: the Portuguese dictionary knows it
    ("ok ok percebido", "pt"),  # "ok" is of no language
    ("sorta", "en"),  # English shorthand the Portuguese dictionary happens to know
    ("on commence par les grandes pièces ?", "fr"),  # words English shares: the identifier is all but certain
    ("dank je wel", "nl"),
    ("dziękuję", "pl"),
    ("teşekkürler", "und"),  # letters neither English nor Portuguese writes
    ("hvala", "und"),  # no word known here, even misspelt
    ("asdfgh", "en"),  # a keyboard mash is no language
    ("awsome", "en"),  # a misspelt English word
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


@pytest.mark.parametrize(("line", "gloss"), [
    ("ponham o quadrado", "put the square"),  # a form of pôr the gloss does not list
    ("puseste o azul", "placed the blue"),
    ("metam o verde", "put the green"),
    ("rodamos o vermelho", "rotate the red"),
    ("estica a casa", "stretch the house"),
])
def test_any_form_of_a_glossed_verb_is_read_by_its_lemma(line: str, gloss: str) -> None:
    assert LANGUAGES.gloss(line) == gloss


def test_chat_abbreviations_are_written_out_before_the_gloss() -> None:
    assert LANGUAGES.gloss("n toques no q eu pus") == "dont touch the pieces i placed"
    assert LANGUAGES.gloss("o vermelho vai pra baixo") == "the red goes down"
    assert LANGUAGES.gloss("ja ta?") == "is it done"


def test_emoji_are_read_as_words_and_accents_fold() -> None:
    assert LANGUAGES.plain("👍").strip() == "ok"
    assert fold("Peça à DIREITA") == "peca a direita"
