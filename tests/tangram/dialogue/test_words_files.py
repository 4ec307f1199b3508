"""The words files refuse a key given twice: plain YAML keeps the last and drops the first unseen."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agent.games.tangram.dialogue.language import LANGUAGES_PATH, load_languages
from agent.games.tangram.dialogue.meanings import MEANINGS_PATH, load_meanings


def test_a_gloss_written_twice_stops_the_load(tmp_path: Path) -> None:
    shipped = LANGUAGES_PATH.read_text(encoding="utf-8")
    assert "\n  ajuda: help\n" in shipped.split("\ngloss:\n", 1)[1]  # the file glosses "ajuda" itself
    text = shipped.replace("\ngloss:\n", "\ngloss:\n  ajuda: help\n", 1)
    path = tmp_path / "languages.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(yaml.YAMLError, match="duplicate key 'ajuda'"):
        load_languages(path)


def test_a_meaning_declared_twice_stops_the_load(tmp_path: Path) -> None:
    text = MEANINGS_PATH.read_text(encoding="utf-8")
    first = text.index("\n  study_length:\n")
    second = text.index("\n  frustration:\n")
    path = tmp_path / "meanings.yaml"
    path.write_text(text + text[first:second].rstrip("\n") + "\n", encoding="utf-8")
    with pytest.raises(yaml.YAMLError, match="duplicate key 'study_length'"):
        load_meanings(path)


def test_the_shipped_words_files_load_with_every_key_once() -> None:
    assert load_languages().data.gloss and load_meanings().names
