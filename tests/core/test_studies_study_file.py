"""The study file: every condition resolved into a checked config at load time; each bad file is
refused with one clear line (or one line per problem, all at once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.config import GameConfig
from agent.core.resources import PROJECT_DIR, shipped_configs, shipped_studies
from agent.core.studies.study_file import StudyError, load_study
from agent.games import read_study


def _model_of(game: str) -> type[GameConfig]:
    if game not in ("tangram", "hive"):
        raise ValueError(f"unknown game {game!r} (known: hive, tangram)")
    return GameConfig


def _load(tmp_path: Path, text: str, **files: str):
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    path = tmp_path / "study.yaml"
    path.write_text(text)
    return load_study(path, _model_of, "tangram")


def _error(tmp_path: Path, text: str, **files: str) -> str:
    with pytest.raises(StudyError) as info:
        _load(tmp_path, text, **files)
    return str(info.value)


GOOD = """name: pilot
design: within
conditions:
  a: {config: a.yaml}
  b: {config: a.yaml, model: gpt-4o-mini, player: llm, overrides: {llm: {temperature: 0.5}}}
"""


def test_conditions_resolve_into_checked_configs_with_their_overrides(tmp_path: Path) -> None:
    study = _load(tmp_path, GOOD, **{"a.yaml": "player: offline\nllm: {model: m-1, temperature: 0.1}\n"})
    a, b = study.conditions
    assert (a.config.player, a.config.llm.model, a.config.llm.temperature) == ("offline", "m-1", 0.1)
    assert (b.config.player, b.config.llm.model, b.config.llm.temperature) == ("llm", "gpt-4o-mini", 0.5)
    assert a.config.source == (tmp_path / "a.yaml").resolve()
    assert study.store == (tmp_path / "study.db").resolve() and study.game == "tangram"
    assert study.plan.sequences == (("a", "b"), ("b", "a"))


@pytest.mark.parametrize("text, files, line", [
    ("name: s\ndesign: fixed\norder: [a, bb]\nconditions: {a: {}, b: {}}\n", {},
     "field 'order': unknown condition 'bb' (did you mean 'b'?)"),
    ("name: s\ndesign: between\nquotas: {zzz: 3}\nconditions: {a: {}, b: {}}\n", {},
     "field 'quotas': unknown condition 'zzz' (conditions: a, b)"),
    ("name: s\ndesign: within\nconditions: {}\n", {},
     "field 'conditions': the study names no conditions"),
    ("name: s\nconditions: {a: {}}\n", {}, "field 'design': missing (within, between or fixed)"),
    ("name: s\ndesign: mixed\nconditions: {a: {}}\n", {}, "field 'design': Input should be 'within', 'between' or"),
    ("name: s\ndesign: within\nconditions: {a: {config: nope.yaml}}\n", {},
     "condition 'a': cannot read config"),
    ("name: s\ndesign: within\nconditions: {a: {config: bad.yaml}}\n", {"bad.yaml": "llm: [unclosed\n"},
     "condition 'a': config"),
    ("name: s\ndesign: within\nconditions: {a: {config: c.yaml}}\n", {"c.yaml": "llm: {temperature: 7}\n"},
     "condition 'a': config"),
    ("name: s\ndesign: within\nconditions: {a: {overrides: {llm: {modle: x}}}}\n", {},
     "field 'llm.modle': unknown field (did you mean 'llm.model'?)"),
    ("name: s\ndesign: within\nconditions: {a: {confg: c.yaml}}\n", {},
     "field 'conditions.a.confg': unknown field (did you mean 'conditions.a.config'?)"),
    ("name: s\ndesign: within\nquotas: {a: 2}\nconditions: {a: {}}\n", {},
     "field 'quotas': only a between design takes quotas (this one is within)"),
    ("name: s\ndesign: within\nconditions:\n  a: {}\n  a: {}\n", {}, "duplicate key 'a'"),
    ("name: s\ndesign: within\nconditions: {'a b': {}}\n", {}, "condition name 'a b'"),
    ("name: s\ndesign: within\nconditions: {a: {}, b: {config: h.yaml}}\n", {"h.yaml": "game: hive\n"},
     "condition 'b': its config is for the game 'hive', not 'tangram' (condition 'a')"),
    ("- a\n- b\n", {}, "must be a mapping of fields, not a list"),
])
def test_a_bad_study_file_is_one_clear_line(tmp_path: Path, text: str, files: dict[str, str], line: str) -> None:
    message = _error(tmp_path, text, **files)
    assert "\n" not in message, message
    assert message.startswith(f"study {tmp_path / 'study.yaml'}"), message
    assert line in message, message


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    message = _error(tmp_path, "name: s\ndesing: within\nconditions: {a: {config: x.yaml}, b: {}}\n"
                               "games_per_condition: 0\n")
    lines = message.splitlines()
    assert lines[0].endswith("has 3 problems:"), message
    assert "field 'desing': unknown field (did you mean 'design'?)" in message
    assert "field 'design': missing" in message and "field 'games_per_condition'" in message


def test_every_condition_with_a_broken_config_is_named(tmp_path: Path) -> None:
    message = _error(tmp_path, "name: s\ndesign: within\nconditions: {a: {config: x.yaml}, b: {config: y.yaml}}\n")
    assert "has 2 problems" in message and "condition 'a'" in message and "condition 'b'" in message


def test_the_shipped_example_needs_no_key_and_hands_a_condition_to_the_console() -> None:
    assert [p.name for p in shipped_studies()] == ["study-example.yaml", "study-online-example.yaml"]
    assert "study-example.yaml" not in {p.name for p in shipped_configs()}  # no config: not offered as one
    study = read_study(PROJECT_DIR / "configs" / "study-example.yaml")
    assert study.plan.design == "within" and len(study.conditions) == 3 and len(study.plan.sequences) == 6
    assert not any(c.config.uses_llm() for c in study.conditions)
    modes = {c.name: c.config.console.default_mode for c in study.conditions}  # type: ignore[attr-defined]
    assert modes == {"planner": "autonomous", "quiet": "autonomous", "wizard": "wizard"}
    assert study.condition("wizard").console == "wizard"
    assert [c.config.turn.thinking_line for c in study.conditions] == [True, False, True]  # type: ignore[attr-defined]


def test_a_console_mode_is_the_games_to_check(tmp_path: Path) -> None:
    # The core declares no console modes: a condition's console sets the game's console.default_mode,
    # and the game's config model names the modes it has.
    path = tmp_path / "study.yaml"
    path.write_text("name: x\ndesign: within\nconditions:\n  a: {console: wizzard}\n  b: {}\n")
    with pytest.raises(StudyError, match=r"console\.default_mode': Input should be 'autonomous', 'supervised' or "
                                         "'wizard'"):
        read_study(path)
