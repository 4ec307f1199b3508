"""Questionnaires in the study file: every problem at once, one line each, with a guess for a
misspelt name; the flow each participant goes through; the server's check of every answer; the
scores with reverse-keyed items flipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.studies.questionnaires import check_answers, scored
from agent.core.studies.study_file import StudyError
from agent.games import read_study
from tests.questionnaire_study import QUESTIONNAIRES

BASE = """name: q
design: within
conditions: {planner: {}, quiet: {}}
"""


def _study(tmp_path: Path, text: str):
    path = tmp_path / "study.yaml"
    path.write_text(text)
    return read_study(path)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(StudyError) as info:
        _study(tmp_path, text)
    return str(info.value)


def test_the_example_questionnaires_load_and_give_each_participant_their_flow(tmp_path: Path) -> None:
    study = _study(tmp_path, BASE + QUESTIONNAIRES)
    q = study.questionnaires
    assert q is not None and q.languages == ("en", "pt") and q.attention.allowed_failures == 0
    steps = q.steps(study.plan.slots(1))
    assert [s.describe() for s in steps] == [
        "questionnaire about (before the first game)", "game 1", "questionnaire partner (after game 1)",
        "game 2", "questionnaire partner (after game 2)", "questionnaire final (after the last game)"]
    assert [s.condition for s in steps if s.kind == "game"] == list(study.plan.sequences[1])
    # The random order is drawn per participant and page, the same each time.
    orders = {tuple(q.item_order("partner", f"P{n}", 3)) for n in range(12)}
    assert len(orders) > 1 and q.item_order("partner", "P1", 3) == q.item_order("partner", "P1", 3)
    view = q.render("final", "en", ["preferred", "why"], 2)
    assert view["items"][0]["text"] == "Whom would you play with again: the first partner or the second partner?"
    partner = q.render("partner", "pt", q.item_order("partner", "P1", 3), 2)
    assert all(set(i) & {"correct", "scale", "reverse"} == set() for i in partner["items"])


def test_every_problem_of_the_questionnaires_is_one_line_at_once(tmp_path: Path) -> None:
    text = BASE + QUESTIONNAIRES.replace("after_each: partner", "after_each: {planner: partner, quite: partner}") \
        .replace("before_first: about", "before_first: abuot") \
        .replace("{id: age, kind: number, min: 18, max: 99, text: {en: Your age, pt: A sua idade}}",
                 "{id: age, kind: number, min: 18, max: 99, text: {en: Your age}}")
    message = _error(tmp_path, text)
    assert "field 'flow.after_each': unknown condition 'quite' (did you mean 'quiet'?)" in message
    assert "field 'flow.after_each': names no questionnaire for quiet" in message
    assert "field 'flow.before_first': unknown questionnaire 'abuot' (did you mean 'about'?)" in message
    assert "field 'questionnaires.about.items.0 (age).text': no pt text" in message
    misspelt = BASE + QUESTIONNAIRES.replace("kind: slider, scale: effort", "kind: slider, scael: effort")
    assert "(did you mean 'questionnaires.partner.items.2.slider.scale'?)" in _error(tmp_path, misspelt)
    before = BASE + QUESTIONNAIRES.replace("Your age,", "\"Your age with {partner1}\",")
    assert "{partner1} only in the after_last questionnaire" in _error(tmp_path, before)
    many = BASE + QUESTIONNAIRES.replace("or {partner2}?", "or {partner3}?")
    assert "{partner3}, but a participant has 2 partners" in _error(tmp_path, many)
    wrong = BASE + QUESTIONNAIRES.replace("correct: blue", "correct: green")
    assert "correct: 'green' is none of the options' values" in _error(tmp_path, wrong)


def test_answers_are_checked_by_kind_range_and_required(tmp_path: Path) -> None:
    q = _study(tmp_path, BASE + QUESTIONNAIRES).questionnaires
    assert q is not None
    partner = q.specs["partner"]
    good, problems = check_answers(partner, {"helped": 5, "hindered": 1, "effort": 12.5, "check": "red"}, {}, 2)
    assert problems == [] and [a.failed_check for a in good] == [False, False, False, True]
    _, problems = check_answers(partner, {"helped": 6, "hindered": True, "effort": 101, "check": ["blue"]}, {}, 2)
    assert problems == ["helped: a point from 1 to 5", "hindered: a point from 1 to 5",
                        "effort: a value from 0 to 100", "check: one of the options"]
    final = q.specs["final"]
    _, problems = check_answers(final, {"preferred": "3", "why": "x" * 501}, {}, 2)
    assert problems == ["preferred: '3' is none of the options", "why: at most 500 characters"]
    whole, _ = check_answers(partner, {"helped": 5, "hindered": 1, "effort": 70, "check": "red"}, {}, 2)
    assert [(a.value, type(a.value)) for a in whole if a.item == "effort"] == [(70, int)]  # stored as sent: not 70.0
    helped, hindered = partner.items[0], partner.items[1]
    assert scored(helped, 4) == 4 and scored(hindered, 4) == 2 and scored(partner.items[3], "blue") is None


@pytest.mark.parametrize("name", ["study-example.yaml", "study-online-example.yaml"])
def test_the_shipped_examples_ask_before_after_each_and_after_the_last_game_in_english_and_portuguese(
        name: str) -> None:
    from agent.core.resources import PROJECT_DIR
    from agent.core.studies.questionnaires import _texts

    study = read_study(PROJECT_DIR / "configs" / name)
    q = study.questionnaires
    assert q is not None and q.languages == ("en", "pt") and q.attention.allowed_failures == 1
    flow = q.flow
    assert isinstance(flow.after_each, str) and flow.before_first and flow.after_last
    assert len({flow.before_first, flow.after_each, flow.after_last}) == 3
    steps = q.steps(study.plan.slots(1))
    games = len(study.conditions)
    assert [(s.kind, s.questionnaire) for s in steps] == [
        ("page", flow.before_first), *[(k, n) for _ in range(games) for k, n in
                                       (("game", None), ("page", flow.after_each))], ("page", flow.after_last)]
    # One attention check, counting towards no scale; a partner page with scales and a reverse-keyed item.
    checks = [(n, i.id) for n, s in q.specs.items() for i in s.items if getattr(i, "correct", None) is not None]
    assert len(checks) == 1
    partner = q.specs[flow.after_each].items
    assert 4 <= len(partner) <= 6 and any(i.reverse for i in partner) and len({i.scale for i in partner} - {None}) >= 2
    # The final page names the partners by place (never by condition) and takes a free-text comment.
    final = q.specs[flow.after_last].items
    assert any(getattr(i, "options", None) == "partners" for i in final)
    assert any(i.kind == "long_text" and not i.required for i in final)
    # Every text in English and Portuguese, each its own.
    for qname, spec in q.specs.items():
        for where, text in _texts(spec):
            assert set(text) == {"en", "pt"} and all(t.strip() for t in text.values()), f"{qname}.{where}"
        assert spec.title["en"] != spec.title["pt"]
    view = q.render(flow.after_last, "pt", q.item_order(flow.after_last, "P01", len(steps)), games)
    texts = " ".join(i["text"] for i in view["items"])
    assert "o primeiro parceiro" in texts and not any(c in texts for c in [c.name for c in study.conditions])
    if study.online is not None:
        assert study.online.screen_out_code and study.online.screen_out_url
        assert study.online.screen_out_code in study.online.screen_out_url
