"""A scripted participant answering the study's questionnaire pages in the participant page
(agent/games/tangram/online/static/participant.js), for the online real-game check (online.py).

What each answer is comes from pure functions (``choose``: a seeded draw per participant and page,
the attention check passed or failed as the participant is told); the browser part enters it the way
a person does (a click on a choice, the keyboard on a slider, typing in a text box), optionally
reloads in the middle of the page once the server has the draft and checks the answers came back,
then reads what the form holds as it is submitted: that is what the browser entered, and what the
exports are compared with (exported.py).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.core.studies.questionnaires import Questionnaires

SLIDER_START = 50
"""Where a slider's thumb starts (participant.js): it counts as answered once moved."""
TEXTS = {
    "en": "I liked the <b>second</b> game & its partner; 3 < 4.",
    "pt": "Gostei mais do <b>segundo</b> jogo & do parceiro; 3 < 4, à última da hora.",
}
"""Free text typed into text boxes: markup and accents, stored and exported as typed."""

READ_FORM = """() => {
  const form = document.getElementById('page');
  if (!form) return null;
  const items = [];
  for (const set of form.querySelectorAll('fieldset.item')) {
    const kind = set.dataset.kind;
    const inputs = Array.from(set.querySelectorAll('input[type=radio], input[type=checkbox]'));
    let value = null;
    if (kind === 'likert') {
      const c = inputs.find((i) => i.checked); value = c ? Number(c.value) : null;
    } else if (kind === 'single') {
      const c = inputs.find((i) => i.checked); value = c ? c.value : null;
    } else if (kind === 'multiple') {
      value = inputs.filter((i) => i.checked).map((i) => i.value);
      if (!value.length) value = null;
    } else if (kind === 'slider') {
      const i = set.querySelector('input[type=range]'); value = i.dataset.moved ? Number(i.value) : null;
    } else if (kind === 'number') {
      const i = set.querySelector('input'); value = i.value === '' ? null : Number(i.value);
    } else {
      const i = set.querySelector('input, textarea'); value = i.value === '' ? null : i.value;
    }
    const other = set.querySelector('input.other');
    items.push({id: set.dataset.item, kind: kind, options: inputs.map((i) => i.value),
                required: set.querySelector('.req').textContent.trim(), value: value,
                other: other && other.value ? other.value : null});
  }
  return {title: document.getElementById('title').textContent, language: document.documentElement.lang,
          items: items};
}"""
"""The page's items as the participant sees them (order, kind, choices) with what each holds now."""


@dataclass(frozen=True)
class Persona:
    """How one scripted participant answers."""

    name: str
    language: str | None = None
    """Asked for in the link (``lang=pt``); None: the study's default."""
    fail_checks: bool = False
    """Answers every attention check wrongly (screened out after more than the study allows)."""
    reload_page: str | None = None
    """Reloads in the middle of the first page of this questionnaire, once its draft is saved."""


@dataclass(frozen=True)
class ItemView:
    """An item as its page shows it."""

    id: str
    kind: str
    options: tuple[str, ...] = ()
    """The values of its choices (Likert points "1".."k"; "other" included)."""
    optional: bool = False


@dataclass(frozen=True)
class Entry:
    """One answer as the browser held it when its page was submitted."""

    participant: str
    questionnaire: str
    game_position: int | None
    """The game the page follows (after_each pages); None before the first and after the last game."""
    item: str
    value: Any
    other: str | None
    language: str


@dataclass
class Answered:
    entries: list[Entry] = field(default_factory=list)
    reloads_checked: int = 0
    pages: int = 0


def seed(persona: str, questionnaire: str, position: int | None) -> random.Random:
    return random.Random(f"{persona}/{questionnaire}/{position}")


def choose(item: ItemView, rng: random.Random, language: str, correct: Any = None,
           fail_check: bool = False) -> tuple[Any, str | None]:
    """The value to enter for ``item`` (and the text of an "other" choice); None: left empty."""
    if item.kind == "likert":
        points = [int(o) for o in item.options]
        if correct is not None:
            return (correct if not fail_check else next(p for p in points if p != correct)), None
        return rng.choice(points), None
    if item.kind in ("single", "multiple"):
        plain = [o for o in item.options if o != "other"]
        if correct is not None:
            pick = correct if not fail_check else next(o for o in plain if o != correct)
            return (pick if item.kind == "single" else [pick]), None
        if item.kind == "single":
            value = rng.choice(item.options)
            return value, (TEXTS[language][:40] if value == "other" else None)
        chosen = rng.sample(item.options, rng.randint(1, len(item.options)))
        values = [o for o in item.options if o in chosen]  # in the page's order, as the page sends them
        return values, (TEXTS[language][:40] if "other" in values else None)
    if item.kind == "slider":
        return rng.choice([v for v in range(0, 101, 5) if v != SLIDER_START]), None
    if item.kind == "number":
        return rng.randint(18, 80), None
    return TEXTS.get(language, TEXTS["en"]), None


def questionnaire_of(q: Questionnaires, items: Sequence[str]) -> str:
    """The study's questionnaire whose items a page shows (its items in any order)."""
    wanted = set(items)
    for name, spec in q.specs.items():
        if {i.id for i in spec.items} == wanted:
            return name
    raise AssertionError(f"no questionnaire of the study has the items {sorted(wanted)}")


def correct_answers(q: Questionnaires, questionnaire: str) -> dict[str, Any]:
    """The attention checks of a questionnaire: item, its correct answer."""
    checks = {i.id: getattr(i, "correct", None) for i in q.specs[questionnaire].items}
    return {item: correct for item, correct in checks.items() if correct is not None}


def differences(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """What a form holds (``got``: item -> value) that is not what was entered (``want``)."""
    return [f"{item}: entered {value!r}, the page holds {got.get(item)!r}"
            for item, value in want.items() if got.get(item) != value]


def _view(raw: dict[str, Any]) -> ItemView:
    return ItemView(raw["id"], raw["kind"], tuple(raw["options"]), raw["required"].strip("()") in ("optional",
                                                                                                     "opcional"))


async def _enter(page: Any, item: ItemView, value: Any, other: str | None, timeout_ms: float) -> None:
    name = f"q-{item.id}"
    if item.kind in ("likert", "single", "multiple"):
        for v in value if isinstance(value, list) else [value]:
            await page.locator(f"input[name='{name}'][value='{v}']").check(timeout=timeout_ms)
        if other is not None:
            await page.locator(f"#{name}-other").fill(other, timeout=timeout_ms)
    elif item.kind == "slider":
        slider = page.locator(f"#{name}-input")
        await slider.focus(timeout=timeout_ms)
        key = "ArrowRight" if value > SLIDER_START else "ArrowLeft"
        for _ in range(abs(value - SLIDER_START)):  # the keyboard moves it, one step a press
            await page.keyboard.press(key)
    else:
        await page.locator(f"#{name}-input").fill(str(value), timeout=timeout_ms)


def _held(form: dict[str, Any]) -> dict[str, Any]:
    return {i["id"]: i["value"] for i in form["items"]}


async def _draft_saved(page: Any, want: dict[str, Any], timeout_ms: float) -> Any:
    """Waits for the page's draft call carrying all of ``want`` to be stored (answered 204)."""
    def carries(response: Any) -> bool:
        if not response.url.endswith("/api/draft") or not response.ok:
            return False
        try:
            sent = json.loads(response.request.post_data or "{}").get("answers", {})
        except ValueError:
            return False
        return all(sent.get(k) == v for k, v in want.items())
    return await page.wait_for_event("response", predicate=carries, timeout=timeout_ms)


async def answer_page(page: Any, q: Questionnaires, persona: Persona, position: int, done: Answered,
                      step_s: float) -> str:
    """Answers the questionnaire page shown (``position``: games played so far) and submits it; its
    name. Raises AssertionError when the form does not hold what was entered or a reload lost an
    answer (a page the server refuses stays shown: the next step's wait says what it shows)."""
    timeout_ms = step_s * 1000
    form = await page.evaluate(READ_FORM)
    items = [_view(i) for i in form["items"]]
    name = questionnaire_of(q, [i.id for i in items])
    language = form["language"]
    gp = position if _after_each(q, name) else None
    rng = seed(persona.name, name, gp)
    checks = correct_answers(q, name)
    plan = [(item, *choose(item, rng, language, checks.get(item.id), persona.fail_checks)) for item in items]
    reload_here = persona.reload_page == name and done.reloads_checked == 0
    half = len(plan) // 2 if reload_here else len(plan)
    saved = None
    if reload_here:
        want = {item.id: value for item, value, _ in plan[:half]}
        saved = asyncio.ensure_future(_draft_saved(page, want, timeout_ms))
    try:
        for item, value, other in plan[:half]:
            await _enter(page, item, value, other, timeout_ms)
    except BaseException:
        if saved is not None:
            saved.cancel()
        raise
    if saved is not None:
        await saved
        await page.reload(timeout=timeout_ms)
        await page.locator("#page fieldset.item").first.wait_for(timeout=timeout_ms)
        after = await page.evaluate(READ_FORM)
        lost = differences({item.id: value for item, value, _ in plan[:half]}, _held(after))
        if lost or [i["id"] for i in after["items"]] != [i.id for i in items]:
            why = lost or "the items came back in another order"
            raise AssertionError(f"{persona.name}: after the reload on {name}: {why}")
        done.reloads_checked += 1
    for item, value, other in plan[half:]:
        await _enter(page, item, value, other, timeout_ms)
    held = await page.evaluate(READ_FORM)
    wrong = differences({item.id: value for item, value, _ in plan}, _held(held))
    if wrong:
        raise AssertionError(f"{persona.name} on {name}: {wrong}")
    for raw in held["items"]:
        if raw["value"] is not None:
            done.entries.append(Entry(persona.name, name, gp, raw["id"], raw["value"], raw["other"],
                                      held["language"]))
    await page.evaluate("() => { document.getElementById('page').dataset.answered = '1'; }")
    await page.locator("#page button[type=submit]").click(timeout=timeout_ms)
    done.pages += 1
    return name


def _after_each(q: Questionnaires, name: str) -> str | None:
    """``name`` when it is a page that follows a game (the flow's after_each), else None."""
    after = q.flow.after_each
    names = set(after.values()) if isinstance(after, dict) else ({after} if after else set())
    return name if name in names else None
