"""Every line the partner reads exists in English and in Portuguese (issue 68, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agent.games.tangram.dialogue import LANGUAGES, line_language, load_partner_lines, partner_line
from agent.games.tangram.dialogue.partner_lines import LINES_PATH
from agent.games.tangram.dialogue.phrases import load_phrases
from agent.games.tangram.link import chat_desk
from agent.games.tangram.link.study import load_lines
from agent.games.tangram.turn.lines import shipped_turn_lines
from agent.games.tangram.turn.state import LINE_NAMES

SAMPLE = {"piece": "Green", "part": "tail"}


def test_the_languages_are_english_and_portuguese() -> None:
    assert LANGUAGES == ("en", "pt")


@pytest.mark.parametrize("key", load_partner_lines().keys)
def test_every_partner_line_is_written_in_both_languages(key: str) -> None:
    en, pt = (partner_line(key, lang, **SAMPLE) for lang in LANGUAGES)
    assert en and pt
    assert en != pt


def test_a_line_in_one_language_only_stops_the_load(tmp_path: Path) -> None:
    data = yaml.safe_load(LINES_PATH.read_text(encoding="utf-8"))
    del data["lines"]["busy"]["pt"]
    path = tmp_path / "lines.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ValueError, match="busy"):
        load_partner_lines(path)


def test_an_empty_line_stops_the_load(tmp_path: Path) -> None:
    data = yaml.safe_load(LINES_PATH.read_text(encoding="utf-8"))
    data["lines"]["slow"]["en"] = "  "
    path = tmp_path / "lines.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ValueError, match="slow"):
        load_partner_lines(path)


def test_a_language_the_lines_lack_gets_the_games_own() -> None:
    assert partner_line("busy", "fr") == partner_line("busy", "en")


@pytest.mark.parametrize("line", LINE_NAMES)
def test_every_turn_line_is_written_in_both_languages(line: str) -> None:
    lines = shipped_turn_lines()
    en = lines(line, piece="Green", reason="", lang="en")  # type: ignore[arg-type]
    pt = lines(line, piece="Green", reason="", lang="pt")  # type: ignore[arg-type]
    assert en and pt
    assert en != pt


@pytest.mark.parametrize("group", ["turn", "chat"])
def test_every_planner_phrase_is_written_in_both_languages(group: str) -> None:
    english, portuguese = load_phrases(lang="en"), load_phrases(lang="pt")
    assert english.keys(group)
    assert set(english.keys(group)) == set(portuguese.keys(group))


def test_the_chat_desk_says_its_lines_in_the_requests_language() -> None:
    assert partner_line("busy", "en") == chat_desk.BUSY
    assert line_language("podes rodar o quadrado roxo, por favor?") == "pt"
    assert line_language("can you turn the purple square please?") == "en"
    assert partner_line("busy", line_language("espera, ainda estou a pensar")) == partner_line("busy", "pt")


def test_the_study_line_is_said_in_both_languages_at_once() -> None:
    line = load_lines().no_participant
    assert partner_line("no_participant", "en") in line
    assert partner_line("no_participant", "pt") in line


def test_the_thinking_line_is_said_in_both_languages() -> None:
    from agent.games.tangram.config import Config
    from agent.games.tangram.turn.thinking import thinking_lines

    lines = thinking_lines(Config())
    assert lines is not None
    assert lines == {lang: partner_line("thinking", lang) for lang in LANGUAGES}


def test_the_turn_says_its_lines_in_the_partners_last_language() -> None:
    from agent.games.tangram.turn import actions as act
    from agent.games.tangram.turn import events as ev
    from tests.tangram.turn.support import Driver

    d = Driver(deadline=60.0, thinking_after_s=4.0, thinking_line=partner_line("thinking", "en"))
    d.machine = type(d.machine)(replace_thinking(d.machine.rules))
    d.feed(ev.PartnerLanguage(0.0, "pt"))
    d.request()
    d.advance(4.5)
    said = [a.text for _, a in d.sent if isinstance(a, act.Say)]
    assert said == [partner_line("thinking", "pt")]
    d.advance(60.0)  # the turn's time runs out: its own line, in Portuguese
    said = [a.text for _, a in d.sent if isinstance(a, act.Say)]
    assert said[-1] == shipped_turn_lines()("ran_out", lang="pt")


def replace_thinking(rules):  # type: ignore[no-untyped-def]
    import dataclasses

    return dataclasses.replace(rules, thinking_lines={lang: partner_line("thinking", lang) for lang in LANGUAGES})


def test_no_line_the_partner_reads_is_written_in_the_llm_player() -> None:
    source = (Path(__file__).resolve().parents[3] / "agent/games/tangram/llm_player/player.py").read_text()
    for key in ("placing_as", "placing", "pass", "move_failed", "failed"):
        assert f'partner_line("{key}"' in source
        english = partner_line(key, "en", **SAMPLE)
        assert english not in source and english.replace("Green", "{") .split("{")[0] not in source
