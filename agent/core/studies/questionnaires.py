"""Questionnaires in the study file, the participant's flow through them, and the server's check of
every answer. Pure models and functions: the store keeps the answers, online.py serves the pages.

```yaml
languages: [en, pt]                 # the first is the default
attention: {allowed_failures: 1}    # more failed attention checks end the participation (screened out)
questionnaires:
  partner:
    title: {en: About your partner, pt: Sobre o seu parceiro}
    order: random                   # fixed (as listed) | random (drawn per participant, recorded)
    items:
      - {id: helpful, kind: likert, points: 7, scale: helpfulness,
         text: {en: My partner helped me., pt: O meu parceiro ajudou-me.},
         ends: [{en: Disagree, pt: Discordo}, {en: Agree, pt: Concordo}]}
      - {id: check, kind: single, correct: b, text: {...}, options: [{value: a, text: {...}}, ...]}
flow:
  before_first: about_you           # before the first game
  after_each: partner               # after every game (or {condition: questionnaire, ...})
  after_last: final                 # after the last game (and after_each's page of the last game)
```

Item kinds: ``likert`` (``points``, every point labelled with ``labels`` or only the two ``ends``),
``slider`` (0 to 100, two ``ends``), ``single`` and ``multiple`` choice (``options``, or
``options: partners``: the partners by their place; ``other``: a labelled free-text choice),
``short_text`` and ``long_text`` (``max_chars``), ``number`` (``min``, ``max``, ``integer``). Every
item may be ``required`` (default yes), belong to a ``scale`` (numeric kinds; the scale's score is
the mean of its items, ``reverse`` ones flipped), or be an attention check (``correct``: the option's
value, or the Likert point). Texts of the ``after_last`` questionnaire may name the partners by their
place in the participant's order, ``{partner1}``, ``{partner2}``... ("the first partner"), never by
condition.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol

from pydantic import Field, field_validator, model_validator

from agent.core.config import StrictModel

ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")
ID_RULE = "a letter, then up to 39 letters, digits or '_'"
LANGUAGE = r"^[a-z]{2,3}$"
MAX_TEXT_CHARS = 2000
MAX_ITEMS = 60
MAX_OPTIONS = 30
MAX_QUESTIONNAIRES = 40
MAX_SHORT_CHARS = 200
MAX_LONG_CHARS = 4000
MAX_PAGE_CHARS = 40_000
"""The most free text one page takes (its text items' max_chars together): a page's answers fit one call."""
MAX_NUMBER = 1e12
PARTNER = re.compile(r"\{partner(\d{1,2})\}")
OTHER = "other"
"""The value of an item's "other" choice (its text comes beside it)."""
PLACES = {
    "en": ("the first partner", "the second partner", "the third partner", "the fourth partner",
           "the fifth partner", "the sixth partner", "the seventh partner", "the eighth partner"),
    "pt": ("o primeiro parceiro", "o segundo parceiro", "o terceiro parceiro", "o quarto parceiro",
           "o quinto parceiro", "o sexto parceiro", "o sétimo parceiro", "o oitavo parceiro"),
}
"""How a text names a partner by their place in the participant's order, per language (others: the
study file's ``partner_places``)."""

Text = dict[str, str]
"""One text in each of the study's languages: {en: ..., pt: ...}."""


def _check_text(value: Text) -> Text:
    if not value:
        raise ValueError("a text needs at least one language ({en: ...})")
    for lang, text in value.items():
        if not re.match(LANGUAGE, lang):
            raise ValueError(f"{lang!r} is not a language code (two or three lowercase letters: en, pt)")
        if not text.strip() or len(text) > MAX_TEXT_CHARS:
            raise ValueError(f"the {lang} text must have 1 to {MAX_TEXT_CHARS} characters")
    return value


class Option(StrictModel):
    value: str = Field(pattern=ID.pattern, description=f"What is stored: {ID_RULE}.")
    text: Text

    _text = field_validator("text")(_check_text)


class _Item(StrictModel):
    id: str = Field(pattern=ID.pattern, description=f"The item's name in the data: {ID_RULE}.")
    text: Text = Field(description="The question, in each of the study's languages.")
    required: bool = True
    scale: str | None = Field(None, pattern=ID.pattern, description="The scale the item's value counts towards.")
    reverse: bool = Field(False, description="Reverse-keyed: flipped (low becomes high) in the scale's score.")

    _text = field_validator("text")(_check_text)


class LikertItem(_Item):
    kind: Literal["likert"]
    points: int = Field(ge=2, le=11, description="Answer points 1 to points.")
    labels: list[Text] | None = Field(None, description="A label for every point (or give ends).")
    ends: list[Text] | None = Field(None, min_length=2, max_length=2, description="Labels of the first and last point.")
    correct: int | None = Field(None, description="An attention check: the point to choose.")

    @model_validator(mode="after")
    def _labelled(self) -> LikertItem:
        if (self.labels is None) == (self.ends is None):
            raise ValueError("a likert item labels every point (labels) or only its two ends (ends), one of them")
        if self.labels is not None and len(self.labels) != self.points:
            raise ValueError(f"labels: {len(self.labels)} given for {self.points} points")
        for text in [*(self.labels or []), *(self.ends or [])]:
            _check_text(text)
        if self.correct is not None and not 1 <= self.correct <= self.points:
            raise ValueError(f"correct: a point from 1 to {self.points}")
        return self


class SliderItem(_Item):
    kind: Literal["slider"]
    ends: list[Text] = Field(min_length=2, max_length=2, description="Labels of 0 and 100.")

    @field_validator("ends")
    @classmethod
    def _ends(cls, value: list[Text]) -> list[Text]:
        return [_check_text(t) for t in value]


class ChoiceItem(_Item):
    kind: Literal["single", "multiple"]
    options: list[Option] | Literal["partners"] = Field(description=(
        "The choices, or 'partners': the participant's partners by their place (after_last only)."))
    other: Text | None = Field(None, description="The label of an 'other' choice with a text field.")
    correct: str | None = Field(None, description="An attention check (single only): the option to choose.")

    @model_validator(mode="after")
    def _choices(self) -> ChoiceItem:
        if self.other is not None:
            _check_text(self.other)
        if isinstance(self.options, list):
            if not 2 <= len(self.options) <= MAX_OPTIONS:
                raise ValueError(f"options: 2 to {MAX_OPTIONS}")
            values = [o.value for o in self.options]
            twice = sorted({v for v in values if values.count(v) > 1})
            if twice:
                raise ValueError(f"options: value {', '.join(twice)} given more than once")
            if OTHER in values and self.other is not None:
                raise ValueError(f"options: {OTHER!r} is the value of the 'other' choice")
        if self.correct is not None:
            if self.kind != "single" or not isinstance(self.options, list):
                raise ValueError("correct: only a single-choice item with its own options is an attention check")
            if self.correct not in [o.value for o in self.options]:
                raise ValueError(f"correct: {self.correct!r} is none of the options' values")
        if self.scale is not None or self.reverse:
            raise ValueError("a choice item has no scale and is not reverse-keyed (its values are names)")
        return self


class TextItem(_Item):
    kind: Literal["short_text", "long_text"]
    max_chars: int | None = Field(None, ge=1, le=MAX_LONG_CHARS, description=(
        f"The most characters (default and most: {MAX_SHORT_CHARS} short, {MAX_LONG_CHARS} long)."))

    @model_validator(mode="after")
    def _bounds(self) -> TextItem:
        if self.kind == "short_text" and (self.max_chars or 0) > MAX_SHORT_CHARS:
            raise ValueError(f"max_chars: at most {MAX_SHORT_CHARS} for a short text")
        if self.scale is not None or self.reverse:
            raise ValueError("a text item has no scale and is not reverse-keyed")
        return self

    @property
    def limit(self) -> int:
        return self.max_chars or (MAX_SHORT_CHARS if self.kind == "short_text" else MAX_LONG_CHARS)


class NumberItem(_Item):
    kind: Literal["number"]
    min: float = Field(ge=-MAX_NUMBER, le=MAX_NUMBER)
    max: float = Field(ge=-MAX_NUMBER, le=MAX_NUMBER)
    integer: bool = True

    @model_validator(mode="after")
    def _range(self) -> NumberItem:
        if self.min >= self.max:
            raise ValueError(f"min ({self.min:g}) must be below max ({self.max:g})")
        return self


Item = Annotated[LikertItem | SliderItem | ChoiceItem | TextItem | NumberItem, Field(discriminator="kind")]


class QuestionnaireSpec(StrictModel):
    title: Text
    intro: Text | None = Field(None, description="Shown above the items.")
    order: Literal["fixed", "random"] = Field("fixed", description=(
        "fixed: as listed; random: drawn per participant and page (the order shown is recorded)."))
    items: list[Item] = Field(min_length=1, max_length=MAX_ITEMS)

    _title = field_validator("title")(_check_text)

    @field_validator("intro")
    @classmethod
    def _intro(cls, value: Text | None) -> Text | None:
        return None if value is None else _check_text(value)

    @model_validator(mode="after")
    def _items(self) -> QuestionnaireSpec:
        ids = [i.id for i in self.items]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"items: id {', '.join(twice)} given more than once")
        chars = sum(i.limit for i in self.items if isinstance(i, TextItem))
        if chars > MAX_PAGE_CHARS:
            raise ValueError(f"items: the text items take {chars} characters together, at most {MAX_PAGE_CHARS}")
        return self

    def item(self, item_id: str) -> Any:
        return next(i for i in self.items if i.id == item_id)


class FlowSpec(StrictModel):
    before_first: str | None = Field(None, description="The questionnaire before the first game.")
    after_each: str | dict[str, str] | None = Field(None, description=(
        "The questionnaire after every game: one name, or {condition: name} for every condition."))
    after_last: str | None = Field(None, description="The questionnaire after the last game (after after_each's).")


class AttentionSpec(StrictModel):
    allowed_failures: int = Field(1, ge=0, le=100, description=(
        "Failed attention checks a participant may have; one more ends the participation (screened out)."))


@dataclass(frozen=True)
class Step:
    """One step of a participant's flow: a questionnaire page or a game."""

    index: int
    """1-based place in the flow."""
    kind: Literal["page", "game"]
    position: int
    """A game's position; a page's: the game it follows (0 before the first)."""
    questionnaire: str | None = None
    when: Literal["before_first", "after_each", "after_last"] | None = None
    condition: str | None = None
    """The condition of the game (a page: of the game it follows; None before the first or after the last)."""
    order: int | None = None
    """The condition's place in the participant's order (as condition)."""

    def describe(self) -> str:
        if self.kind == "game":
            return f"game {self.position}"
        where = {"before_first": "before the first game", "after_each": f"after game {self.position}",
                 "after_last": "after the last game"}[self.when or "after_each"]
        return f"questionnaire {self.questionnaire} ({where})"


class SlotLike(Protocol):
    @property
    def position(self) -> int: ...
    @property
    def condition(self) -> str: ...
    @property
    def order(self) -> int: ...


@dataclass(frozen=True)
class Questionnaires:
    """The study file's questionnaires and flow, checked against its conditions."""

    languages: tuple[str, ...]
    specs: Mapping[str, QuestionnaireSpec]
    flow: FlowSpec
    attention: AttentionSpec
    places: Mapping[str, tuple[str, ...]]

    @property
    def default_language(self) -> str:
        return self.languages[0]

    def language(self, wanted: str | None) -> str:
        return wanted if wanted in self.languages else self.default_language

    def steps(self, slots: Sequence[SlotLike]) -> list[Step]:
        """The participant's flow for their games ``slots``, in order."""
        out: list[Step] = []

        def page(name: str | None, position: int, when: Any, condition: str | None = None,
                 order: int | None = None) -> None:
            if name is not None:
                out.append(Step(len(out) + 1, "page", position, name, when, condition, order))

        page(self.flow.before_first, 0, "before_first")
        for slot in slots:
            out.append(Step(len(out) + 1, "game", slot.position, None, None, slot.condition, slot.order))
            after = self.flow.after_each
            page(after.get(slot.condition) if isinstance(after, dict) else after, slot.position, "after_each",
                 slot.condition, slot.order)
        page(self.flow.after_last, len(slots), "after_last")
        return out

    def item_order(self, name: str, participant: str, step: int) -> list[str]:
        """The items' order on ``participant``'s page ``step``: as listed, or drawn (from the
        participant and the page, so a reload draws the same; the store keeps it too)."""
        ids = [i.id for i in self.specs[name].items]
        if self.specs[name].order == "random":
            seed = hashlib.sha256(f"{participant}\0{step}\0{name}".encode()).digest()
            random.Random(seed).shuffle(ids)
        return ids

    def render(self, name: str, language: str, order: Sequence[str], partners: int) -> dict[str, Any]:
        """The page as the participant's browser shows it, in ``language``: texts, never an item's
        correct answer, scale or reverse flag."""
        spec = self.specs[name]
        lang = self.language(language)

        def say(text: Text) -> str:
            return PARTNER.sub(lambda m: self._place(int(m.group(1)), lang), text.get(lang) or text[self.languages[0]])

        items = []
        for item_id in order:
            item = spec.item(item_id)
            view: dict[str, Any] = {"id": item.id, "kind": item.kind, "text": say(item.text),
                                    "required": item.required}
            if isinstance(item, LikertItem):
                view["points"] = item.points
                view["labels"] = [say(t) for t in item.labels] if item.labels else None
                view["ends"] = [say(t) for t in item.ends] if item.ends else None
            elif isinstance(item, SliderItem):
                view["ends"] = [say(t) for t in item.ends]
            elif isinstance(item, ChoiceItem):
                view["options"] = ([{"value": str(i), "text": self._place(i, lang)} for i in range(1, partners + 1)]
                                   if item.options == "partners" else
                                   [{"value": o.value, "text": say(o.text)} for o in item.options])
                view["other"] = say(item.other) if item.other else None
            elif isinstance(item, TextItem):
                view["max_chars"] = item.limit
            elif isinstance(item, NumberItem):
                view.update(min=item.min, max=item.max, integer=item.integer)
            items.append(view)
        return {"title": say(spec.title), "intro": say(spec.intro) if spec.intro else None, "items": items}

    def place_name(self, place: int, lang: str) -> str:
        """How ``lang`` names the partner at ``place`` (1-based) of the participant's order."""
        return self._place(place, lang)

    def _place(self, place: int, lang: str) -> str:
        names = self.places.get(lang) or PLACES.get(lang) or PLACES["en"]
        return names[place - 1] if place <= len(names) else f"#{place}"


# ------------------------------------------------------------------ checking the study file


def _guess(name: str, known: Sequence[str], what: str) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f" ({what}: {', '.join(known) or 'none'})"


def _texts(spec: QuestionnaireSpec) -> list[tuple[str, Text]]:
    out: list[tuple[str, Text]] = [("title", spec.title)]
    if spec.intro:
        out.append(("intro", spec.intro))
    for n, item in enumerate(spec.items):
        at = f"items.{n} ({item.id})"
        out.append((f"{at}.text", item.text))
        for k, t in enumerate(getattr(item, "labels", None) or []):
            out.append((f"{at}.labels.{k}", t))
        for k, t in enumerate(getattr(item, "ends", None) or []):
            out.append((f"{at}.ends.{k}", t))
        if isinstance(item, ChoiceItem):
            if isinstance(item.options, list):
                out += [(f"{at}.options.{k}.text", o.text) for k, o in enumerate(item.options)]
            if item.other:
                out.append((f"{at}.other", item.other))
    return out


def _scale_shape(item: Any) -> tuple[Any, ...]:
    if isinstance(item, LikertItem):
        return ("likert", item.points)
    if isinstance(item, NumberItem):
        return ("number", item.min, item.max)
    return (item.kind,)


def check_questionnaires(languages: Sequence[str], specs: Mapping[str, QuestionnaireSpec], flow: FlowSpec | None,
                         conditions: Sequence[str], partners: int,
                         places: Mapping[str, Sequence[str]]) -> list[str]:
    """Every problem of the questionnaires and the flow, one line each (the models checked each
    questionnaire on its own; this checks them against each other, the languages and conditions)."""
    problems: list[str] = []
    known = list(specs)
    flow = flow or FlowSpec()
    problems += [f"field 'questionnaires': name {name!r}: {ID_RULE}" for name in specs if not ID.match(name)]
    used: dict[str, str] = {}
    for field in ("before_first", "after_last"):
        name = getattr(flow, field)
        if name is not None:
            used.setdefault(name, field)
    after = flow.after_each
    if isinstance(after, dict):
        for cond, name in after.items():
            if cond not in conditions:
                problems.append(f"field 'flow.after_each': unknown condition {cond!r}"
                                f"{_guess(cond, conditions, 'conditions')}")
            used.setdefault(name, "after_each")
        missing = [c for c in conditions if c not in after]
        if missing:
            problems.append(f"field 'flow.after_each': names no questionnaire for {', '.join(missing)} "
                            "(one for every condition, or one name for all)")
    elif after is not None:
        used.setdefault(after, "after_each")
    for name, field in used.items():
        if name not in specs:
            guess = _guess(name, known, "questionnaires")
            problems.append(f"field 'flow.{field}': unknown questionnaire {name!r}{guess}")
    problems += [f"field 'questionnaires.{name}': not in the flow (flow: before_first, after_each or after_last "
                 "names it)" for name in specs if name not in used]
    if specs and not flow.before_first and not flow.after_each and not flow.after_last:
        problems.append("field 'flow': missing (before_first, after_each, after_last: which questionnaire comes when)")
    after_names = set(after.values()) if isinstance(after, dict) else {after} if after else set()
    last_only = {n for n in specs if n == flow.after_last and n != flow.before_first and n not in after_names}
    naming = [n for n, s in specs.items() if any(PARTNER.search(t) for _, text in _texts(s) for t in text.values())
              or any(isinstance(i, ChoiceItem) and i.options == "partners" for i in s.items)]
    problems += [f"field 'partner_places': how {lang} names the partners by their place is not known "
                 f"(questionnaire {naming[0]} does): give partner_places: {{{lang}: [...]}}"
                 for lang in languages if naming and lang not in PLACES and lang not in places]
    for name, spec in specs.items():
        at = f"questionnaires.{name}"
        for where, text in _texts(spec):
            missing = [lang for lang in languages if lang not in text]
            extra = [lang for lang in text if lang not in languages]
            if missing:
                problems.append(f"field '{at}.{where}': no {', '.join(missing)} text (the study's languages: "
                                f"{', '.join(languages)})")
            if extra:
                problems.append(f"field '{at}.{where}': {', '.join(extra)} is not one of the study's languages "
                                f"({', '.join(languages)})")
            for lang, value in text.items():
                for m in PARTNER.finditer(value):
                    n = int(m.group(1))
                    if name not in used:
                        break
                    if name not in last_only:
                        problems.append(f"field '{at}.{where}': {{partner{n}}} only in the after_last questionnaire "
                                        "(before it, the participant has not met every partner)")
                        break
                    if not 1 <= n <= partners:
                        problems.append(f"field '{at}.{where}' ({lang}): {{partner{n}}}, but a participant has "
                                        f"{partners} partner{'s' if partners != 1 else ''}")
        for n, item in enumerate(spec.items):
            if isinstance(item, ChoiceItem) and item.options == "partners" and name in used and name not in last_only:
                problems.append(f"field '{at}.items.{n} ({item.id})': options: partners only in the after_last "
                                "questionnaire")
        scales: dict[str, tuple[Any, ...]] = {}
        for n, item in enumerate(spec.items):
            if item.reverse and item.scale is None:
                problems.append(f"field '{at}.items.{n} ({item.id})': reverse: only an item of a scale is reversed")
            if getattr(item, "correct", None) is not None and item.scale is not None:
                problems.append(f"field '{at}.items.{n} ({item.id})': an attention check (correct) counts "
                                "towards no scale")
            if item.scale is not None:
                shape = _scale_shape(item)
                if scales.setdefault(item.scale, shape) != shape:
                    problems.append(f"field '{at}.items.{n} ({item.id})': scale {item.scale!r} mixes items of "
                                    "different kinds or ranges")
    return list(dict.fromkeys(problems))


def questionnaires_of(languages: Sequence[str], specs: Mapping[str, QuestionnaireSpec], flow: FlowSpec | None,
                      attention: AttentionSpec | None, places: Mapping[str, Sequence[str]]) -> Questionnaires:
    return Questionnaires(tuple(languages), dict(specs), flow or FlowSpec(), attention or AttentionSpec(),
                          {k: tuple(v) for k, v in places.items()})


# ------------------------------------------------------------------ checking answers

Value = int | float | str | list[str] | None


@dataclass(frozen=True)
class Answer:
    item: str
    value: Value
    other: str | None = None
    failed_check: bool = False


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _as_given(raw: Any, number: float) -> float | int:
    """A whole number the page sent stays whole (stored and exported as 70, not 70.0)."""
    return raw if isinstance(raw, int) else number


def check_answers(spec: QuestionnaireSpec, answers: Mapping[str, Any], other: Mapping[str, str],
                  partners: int) -> tuple[list[Answer], list[str]]:
    """The page's answers as stored (every item, None for one left out), or the problems (one line
    each, naming the item): an unknown item, a value of the wrong kind or out of range, a required
    item left out."""
    problems: list[str] = []
    known = {i.id for i in spec.items}
    problems += [f"{name[:40]}: no such item on this page" for name in [*answers, *other] if name not in known]
    out: list[Answer] = []
    for item in spec.items:
        raw = answers.get(item.id)
        text = other.get(item.id)
        blank = raw is None or raw == "" or raw == []
        if blank:
            if item.required:
                problems.append(f"{item.id}: an answer is required")
            out.append(Answer(item.id, None))
            continue
        value, why = _check_one(item, raw, text, partners)
        if why:
            problems.append(f"{item.id}: {why}")
            continue
        correct = getattr(item, "correct", None)
        keep_other = text.strip() if text and (value == OTHER or (isinstance(value, list) and OTHER in value)) else None
        out.append(Answer(item.id, value, keep_other, correct is not None and value != correct))
    return out, problems


def _check_one(item: Any, raw: Any, text: str | None, partners: int) -> tuple[Value, str | None]:
    if isinstance(item, LikertItem):
        if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= item.points:
            return None, f"a point from 1 to {item.points}"
        return raw, None
    if isinstance(item, SliderItem):
        number = _number(raw)
        if number is None or not 0 <= number <= 100:
            return None, "a value from 0 to 100"
        return _as_given(raw, round(number, 2)), None
    if isinstance(item, NumberItem):
        number = _number(raw)
        if number is None or not item.min <= number <= item.max:
            return None, f"a number from {item.min:g} to {item.max:g}"
        if item.integer:
            if number != int(number):
                return None, "a whole number"
            return int(number), None
        return _as_given(raw, number), None
    if isinstance(item, TextItem):
        if not isinstance(raw, str):
            return None, "a text"
        if len(raw) > item.limit:
            return None, f"at most {item.limit} characters"
        if not raw.strip():
            return None, "an empty text"
        return raw, None
    assert isinstance(item, ChoiceItem)
    values = ([str(i) for i in range(1, partners + 1)] if item.options == "partners"
              else [o.value for o in item.options]) + ([OTHER] if item.other else [])
    chosen = [raw] if item.kind == "single" else raw
    if item.kind == "single" and not isinstance(raw, str):
        return None, "one of the options"
    if not isinstance(chosen, list) or not all(isinstance(c, str) for c in chosen) or len(set(chosen)) != len(chosen):
        return None, "a list of different options"
    wrong = [c for c in chosen if c not in values]
    if wrong:
        return None, f"{wrong[0][:40]!r} is none of the options"
    if OTHER in chosen and item.other:
        if not text or not text.strip():
            return None, "the 'other' choice needs its text"
        if len(text) > MAX_SHORT_CHARS:
            return None, f"the 'other' text: at most {MAX_SHORT_CHARS} characters"
    return (raw if item.kind == "single" else chosen), None


def scored(item: Any, value: Value) -> float | None:
    """An item's value as its scale counts it (reverse-keyed items flipped); None when it has none."""
    number = _number(value)
    if number is None or item.scale is None:
        return None
    if not item.reverse:
        return number
    if isinstance(item, LikertItem):
        return item.points + 1 - number
    if isinstance(item, SliderItem):
        return 100 - number
    return float(item.min + item.max - number)
