"""Meanings declared in one entry each (dialogue/words/meanings.yaml): every language, read and answered."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agent.games.tangram.dialogue import LANGUAGES
from agent.games.tangram.dialogue.meanings import MEANINGS_PATH, load_meanings
from agent.games.tangram.dialogue.phrases import load_phrases
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner import load_library


@pytest.mark.parametrize("name", load_meanings().names)
def test_every_meaning_is_said_and_answered_in_every_language(name: str) -> None:
    meanings = load_meanings()
    for lang in LANGUAGES:
        assert meanings.data.meanings[name].says[lang]
        every = ["Red", "Cream", "Blue", "Green", "Yellow", "Purple", "Brown"]
        for placed, drawer, moving in ((0, every, ""), (4, ["Brown"], "Purple"), (7, [], "")):  # each board branch
            line = load_phrases(lang=lang).say("chat", name, figure="cat", description="a cat", placed=placed,
                                               total=7, drawer=drawer, moving=moving, plays_next=NEXT[lang],
                                               for_you=FOR_YOU[lang], ours=drawer[:2], theirs=drawer[2:4])
            assert line and "{" not in line and len(line) < 200
    values = {"figure": "cat", "description": "", "placed": 2, "total": 7, "drawer": [], "moving": "", "plays_next": "",
              "for_you": "", "ours": [], "theirs": []}
    assert load_phrases(lang="en").say("chat", name, **values) != load_phrases(lang="pt").say("chat", name, **values)


NEXT = {"en": "Next I'll place Green as the left ear.",
        "pt": "A seguir vou pôr o triângulo verde como a orelha esquerda."}
"""What the agent plays next, as a reply that says it is given it."""
FOR_YOU = {"en": "You could put the purple square as the upper tail root, on the right side of the fish.",
           "pt": "Podes pôr o quadrado roxo como a raiz de cauda superior, do lado direito do peixe."}
"""A piece the partner could place, as a reply that says it is given it."""


def test_a_meaning_in_one_language_only_stops_the_load(tmp_path: Path) -> None:
    data = yaml.safe_load(MEANINGS_PATH.read_text(encoding="utf-8"))
    name = next(iter(data["meanings"]))
    del data["meanings"][name]["reply"]["pt"]
    path = tmp_path / "meanings.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ValueError, match=name):
        load_meanings(path)


def test_a_phrase_matches_whole_words_only() -> None:
    meanings = load_meanings()
    assert meanings.match("How long does this take?") == "study_length"
    assert meanings.match("Quanto tempo demora o estudo?") == "study_length"
    assert meanings.match("quanto tempo falta") is None  # how much is left: progress
    assert meanings.match("show longdoes") is None


@pytest.mark.parametrize(("line", "lang", "words"), [
    ("how long does this study take?", "en", "researcher"),
    ("quanto tempo demora o estudo?", "pt", "investigador"),
])
def test_the_conversation_answers_a_declared_meaning_in_the_partners_language(line: str, lang: str,
                                                                               words: str) -> None:
    planner = OfflineAgent(load_library())
    reply = planner.chat("A cat", {}, line)
    assert planner.last_reply_kind == "study_length"
    assert words in reply
    assert reply == load_phrases(lang=lang).say("chat", "study_length", figure="cat",
                                                description=planner.figure.description)


def test_an_alone_phrase_is_the_meaning_only_as_the_whole_line() -> None:
    meanings = load_meanings()
    assert meanings.match("Hmm...") == "doubt"
    assert meanings.match("nao sei") == "doubt"
    assert meanings.match("hmm the tail") is None  # a part named: the keyword rules read it
    assert meanings.match("nao sei onde vai o azul") is None


@pytest.mark.parametrize(("line", "name", "lang", "words", "never"), [
    ("this is hard", "frustration", "en", "together", "pieces are in place"),
    ("isto e dificil", "frustration", "pt", "juntos", "percebi"),
    ("can one tell what it is yet?", "opinion_looks", "en", "cat", "Agreed"),
    ("ja se percebe o que e?", "opinion_looks", "pt", "gato", "Combinado"),
])
def test_issue_68_kinds_are_answered_not_counted(line: str, name: str, lang: str, words: str, never: str) -> None:
    planner = OfflineAgent(load_library())
    reply = planner.chat("A cat", {}, line)
    assert planner.last_reply_kind == name
    assert words in reply and never not in reply
