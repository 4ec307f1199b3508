"""The study file: YAML validated like a config, every condition resolved into a checked game
config at load time, before anything listens.

```yaml
name: pilot-2
design: within            # within | between | fixed
conditions:               # in this order (the square's labels, unless a seed shuffles them)
  planner: {config: offline.yaml}
  silent: {config: offline.yaml, overrides: {turn: {thinking_line: false}}}
  wizard: {config: offline.yaml, console: wizard}
games_per_condition: 1
seed: 7                   # optional
```

Every problem is reported at once, one line each, naming the field (a misspelt key gets a guess);
a condition whose config does not load, an unknown condition, an empty design each give one clear
line. The game's config model comes from the caller (the core knows no game).
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from agent.core.config import (
    MAX_REPORTED_ERRORS,
    ConfigError,
    GameConfig,
    StrictModel,
    UniqueKeys,
    describe_errors,
    read_config_mapping,
    read_yaml_mapping,
)
from agent.core.redact import Secrets
from agent.core.resources import find_shipped_config
from agent.core.studies.analysis_plan import AnalysisSpec, analysis_hash, check_analysis, scales_of
from agent.core.studies.latin import MAX_CONDITIONS
from agent.core.studies.plan import Design, Plan, make_plan
from agent.core.studies.questionnaires import (
    LANGUAGE,
    MAX_QUESTIONNAIRES,
    AttentionSpec,
    FlowSpec,
    Questionnaires,
    QuestionnaireSpec,
    check_questionnaires,
    questionnaires_of,
)

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
NAME_RULE = "a letter or digit, then up to 39 letters, digits, '_', '.' or '-'"
MAX_GAMES_PER_CONDITION = 20
MAX_QUOTA = 100_000

ConfigModelOf = Callable[[str], type[GameConfig]]
"""A game's name to its config model; ValueError with one line for an unknown game."""


class StudyError(ConfigError):
    """The study cannot be used; the message names the file and each problem (one line each)."""


class ConditionSpec(StrictModel):
    config: Path | None = Field(None, description=(
        "The condition's config: a file (relative to the study file) or a shipped config's name; "
        "unset: the game's offline default."))
    model: str | None = Field(None, min_length=1, max_length=200, description="Sets llm.model.")
    player: str | None = Field(None, min_length=1, max_length=40, description="Sets player (the game's kinds).")
    prompts_dir: Path | None = Field(None, description="Sets prompts_dir: another folder of prompt templates.")
    console: str | None = Field(None, min_length=1, max_length=40, description=(
        "Console takeover: sets console.default_mode, one of the game's console modes (its config checks it; "
        "tangram: autonomous, supervised, wizard, which hands every AI turn to the experimenter console)."))
    overrides: dict[str, Any] = Field(default_factory=dict, description=(
        "Any other config fields, nested as in a config file, over the config's own."))
    description: str | None = Field(None, max_length=500)


class OnlineSpec(StrictModel):
    """How participants take part from their own browsers (``python -m agent --study FILE --public``,
    docs/online-study.md)."""

    recruitment: Literal["invite", "open"] = Field("invite", description=(
        "invite: only the links 'python -m agent study invite' writes let anyone in; open: the study's open "
        "address (/join, e.g. Prolific's study URL with PROLIFIC_PID, STUDY_ID and SESSION_ID) starts a new "
        "participant per visit, up to max_participants."))
    max_participants: int = Field(200, ge=1, le=100_000, description="Open recruitment: participants at most.")
    consent: str | None = Field(None, min_length=1, max_length=20_000, description=(
        "Information and consent text shown before the first game (plain text, paragraphs separated by blank "
        "lines); the participant's answer is recorded. Unset: no consent page."))
    consent_button: str = Field("I agree and want to take part", min_length=1, max_length=100)
    decline_button: str = Field("I do not agree", min_length=1, max_length=100)
    completion_code: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$", description=(
        "Shown to a participant after their last game (Prolific's completion code)."))
    completion_url: str | None = Field(None, pattern=r"^https://[^\s\"'<>]{1,2000}$", description=(
        "Where a participant is sent after their last game (e.g. "
        "https://app.prolific.com/submissions/complete?cc=CODE), a few seconds after the thank-you page."))
    base_url: str | None = Field(None, pattern=r"^https?://[^\s/\"'<>?#]{1,253}(/[^\s\"'<>?#]*)?$", description=(
        "The participants' address (https://study.example.org), for the links 'study invite' writes."))
    on_leave: Literal["keep", "drop"] = Field("keep", description=(
        "A participant who closed the tab and is not back within leave_grace_s: keep (their slot waits for them; "
        "the link still works) or drop (marked dropped out; their order sequence goes to the next participant)."))
    leave_grace_s: float = Field(600.0, ge=10, le=7 * 24 * 3600, description=(
        "How long a participant who left may take to come back before on_leave applies."))
    start_grace_s: float = Field(1200.0, ge=60, le=7 * 24 * 3600, description=(
        "How long a participant who consented (or asked for their first game) may take to connect it before they "
        "are dropped out and their order sequence goes to the next participant."))
    spend_cap_participant_usd: float | None = Field(None, gt=0, le=100_000, description=(
        "LLM spend per participant (from llm.usd_per_million_input/output) beyond which their next games are "
        "played by the offline planner."))
    spend_cap_study_usd: float | None = Field(None, gt=0, le=1_000_000, description=(
        "LLM spend of the whole study beyond which every next game is played by the offline planner."))
    screen_out_code: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$", description=(
        "Shown to a participant screened out by failed attention checks (Prolific's screen-out code)."))
    screen_out_url: str | None = Field(None, pattern=r"^https://[^\s\"'<>]{1,2000}$", description=(
        "Where a screened-out participant is sent, a few seconds after their page says why."))
    page_timeout_s: float | None = Field(None, ge=60, le=24 * 3600, description=(
        "A participant showing no sign of life on a questionnaire or consent page for longer than this is timed "
        "out (warned timeout_warning_s before) and handled as on_leave says. Unset: no limit."))
    game_timeout_s: float | None = Field(None, ge=60, le=24 * 3600, description=(
        "The same in a game: no AI turn of theirs ended (no move or chat of theirs) for this long. Unset: no limit."))
    timeout_warning_s: float = Field(60.0, ge=10, le=3600, description=(
        "How long before a time-out the participant's page warns them (with a button to say they are there)."))

    @model_validator(mode="after")
    def _warning_before_limits(self) -> OnlineSpec:
        for name in ("page_timeout_s", "game_timeout_s"):
            limit = getattr(self, name)
            if limit is not None and self.timeout_warning_s >= limit:
                raise ValueError(f"timeout_warning_s ({self.timeout_warning_s:g}) must be shorter than {name} "
                                 f"({limit:g}): the warning comes before the time-out")
        return self


class StudyFile(StrictModel):
    name: str = Field(min_length=1, max_length=100, description="The study's name, in every session_start.")
    game: str | None = Field(None, description="The game every condition plays (default: the configs' game).")
    design: Design = Field(description="within, between or fixed.")
    conditions: dict[str, ConditionSpec] = Field(description="Name: condition, in order.")
    games_per_condition: int = Field(1, ge=1, le=MAX_GAMES_PER_CONDITION)
    order: list[str] | None = Field(None, description="fixed: the conditions' order (default: as listed).")
    quotas: dict[str, int] | None = Field(None, description="between: the most participants per condition.")
    seed: int | None = Field(None, ge=0, le=2**63 - 1, description="Shuffles the conditions' places in the plan.")
    store: Path | None = Field(None, description="The SQLite database (default: <study file name>.db beside it).")
    online: OnlineSpec | None = Field(None, description="Participants in their own browsers (docs/online-study.md).")
    languages: list[str] = Field(["en"], min_length=1, max_length=10, description=(
        "The languages the participants' pages offer, the first the default (en, pt, ...)."))
    questionnaires: dict[str, QuestionnaireSpec] = Field(default_factory=dict, max_length=MAX_QUESTIONNAIRES,
                                                         description="Name: questionnaire (docs/study.md).")
    flow: FlowSpec | None = Field(None, description="Which questionnaire comes before, between and after the games.")
    attention: AttentionSpec | None = Field(None, description=(
        "How many failed attention checks a participant may have."))
    partner_places: dict[str, list[str]] = Field(default_factory=dict, description=(
        "How a language other than en and pt names the partners by place: {de: [der erste Partner, ...]}."))
    analysis: AnalysisSpec | None = Field(None, description=(
        "The analysis plan: outcomes, comparison, tests, alpha, correction, exclusions (docs/study.md)."))

    @field_validator("languages")
    @classmethod
    def _languages(cls, value: list[str]) -> list[str]:
        for lang in value:
            if not re.match(LANGUAGE, lang):
                raise ValueError(f"{lang!r} is not a language code (two or three lowercase letters: en, pt)")
        if len(set(value)) != len(value):
            raise ValueError("a language is listed twice")
        return value

    @field_validator("name")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.isprintable() or value != value.strip():
            raise ValueError("the name must be printable, without leading or trailing spaces")
        return value

    @field_validator("conditions")
    @classmethod
    def _names(cls, value: dict[str, ConditionSpec]) -> dict[str, ConditionSpec]:
        if not value:
            raise ValueError("the study names no conditions (conditions: {NAME: {config: FILE}})")
        if len(value) > MAX_CONDITIONS:
            raise ValueError(f"at most {MAX_CONDITIONS} conditions")
        for name in value:
            if not NAME.match(name):
                raise ValueError(f"condition name {name!r}: {NAME_RULE}")
        return value

    @field_validator("quotas")
    @classmethod
    def _quotas(cls, value: dict[str, int] | None) -> dict[str, int] | None:
        for name, quota in (value or {}).items():
            if not 1 <= quota <= MAX_QUOTA:
                raise ValueError(f"quota of {name!r} must be 1 to {MAX_QUOTA}")
        return value


@dataclass(frozen=True)
class Condition:
    name: str
    config: GameConfig
    """Loaded and validated: the config file with the condition's overrides."""
    console: str | None = None
    """The game's console mode for this condition (tangram's ConsoleMode), if the study sets one."""
    description: str | None = None


@dataclass(frozen=True)
class Study:
    name: str
    path: Path
    game: str
    conditions: tuple[Condition, ...]
    plan: Plan
    store: Path
    online: OnlineSpec | None = None
    """The study file's online section (None: in-lab only)."""
    questionnaires: Questionnaires | None = None
    """The questionnaires and the flow (None: games only)."""
    analysis: AnalysisSpec | None = None
    """The analysis plan (None: the study file declares none)."""

    @property
    def analysis_hash(self) -> str | None:
        """16 hex digits of the analysis plan's SHA-256 (None without a plan): in every session's record."""
        return analysis_hash(self.analysis)

    def secrets(self) -> Secrets:
        """Every condition's secrets (API keys, tokens): what a process serving the study masks in
        its logs, transcripts and pages. The one place they are gathered."""
        return Secrets(tuple(v for c in self.conditions for v in c.config.secret_values()))

    def condition(self, name: str) -> Condition:
        for condition in self.conditions:
            if condition.name == name:
                return condition
        raise KeyError(name)


def _guess(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f" (conditions: {', '.join(known)})"


def _describe(err: Any, line: str) -> str:
    if err["type"] == "missing":
        hints = {"design": "within, between or fixed", "conditions": "NAME: {config: FILE} for each condition",
                 "name": "the study's name"}
        field = ".".join(str(p) for p in err["loc"])
        return f"field '{field}': missing" + (f" ({hints[field]})" if field in hints else "")
    return line.replace("Value error, ", "")


def _design_problems(spec: StudyFile) -> list[str]:
    known = list(spec.conditions)
    problems = []
    if spec.order is not None and spec.design != "fixed":
        problems.append(f"field 'order': only a fixed design takes an order (this one is {spec.design})")
    if spec.quotas is not None and spec.design != "between":
        problems.append(f"field 'quotas': only a between design takes quotas (this one is {spec.design})")
    for field, names in (("order", spec.order or []), ("quotas", list(spec.quotas or {}))):
        problems += [f"field '{field}': unknown condition {name!r}{_guess(name, known)}"
                     for name in names if name not in known]
    if spec.order is not None and not problems:
        missing = [n for n in known if n not in spec.order]
        twice = sorted({n for n in spec.order if spec.order.count(n) > 1})
        if twice:
            problems.append(f"field 'order': {', '.join(twice)} listed more than once")
        if missing:
            problems.append(f"field 'order': leaves out {', '.join(missing)} (every condition, once)")
    if spec.questionnaires or spec.flow is not None:
        partners = len(spec.conditions) if spec.design != "between" else 1
        problems += check_questionnaires(spec.languages, spec.questionnaires, spec.flow, known, partners,
                                         spec.partner_places)
    if spec.analysis is not None:
        after = spec.flow.after_each if spec.flow is not None else None
        shown_after = list(after.values()) if isinstance(after, dict) else [after] if after else []
        problems += check_analysis(spec.analysis, spec.design, known, scales_of(spec.questionnaires, shown_after))
    return problems


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _config_path(spec: ConditionSpec, folder: Path) -> Path | None:
    if spec.config is None:
        return None
    beside = spec.config if spec.config.is_absolute() else folder / spec.config
    if beside.exists():
        return beside
    return find_shipped_config(spec.config) or beside


def _condition_mapping(spec: ConditionSpec, data: dict[str, Any], folder: Path) -> dict[str, Any]:
    over: dict[str, Any] = {}
    if spec.model is not None:
        over["llm"] = {"model": spec.model}
    if spec.player is not None:
        over["player"] = spec.player
    if spec.prompts_dir is not None:
        beside = folder / spec.prompts_dir
        over["prompts_dir"] = str(beside if not spec.prompts_dir.is_absolute() and beside.is_dir()
                                  else spec.prompts_dir)
    if spec.console is not None:
        over["console"] = {"default_mode": spec.console}
    return _merge(_merge(data, over), spec.overrides)


def _resolve(spec: StudyFile, path: Path, config_model_of: ConfigModelOf,
             default_game: str) -> tuple[str, list[Condition], list[str]]:
    folder = path.parent
    problems: list[str] = []
    loaded: list[tuple[str, ConditionSpec, Path | None, dict[str, Any]]] = []
    for name, cond in spec.conditions.items():
        config_path = _config_path(cond, folder)
        try:
            data = read_config_mapping(config_path) if config_path is not None else {}
        except ConfigError as exc:
            problems.append(f"condition {name!r}: {exc}")
            continue
        loaded.append((name, cond, config_path, _condition_mapping(cond, data, folder)))
    games = {name: str(data.get("game") or spec.game or default_game) for name, _, _, data in loaded}
    game = spec.game or (next(iter(games.values())) if games else default_game)
    for name, g in games.items():
        if g != game:
            first = next(n for n, other in games.items() if other == game)
            where = "the study's game" if spec.game else f"condition {first!r}"
            problems.append(f"condition {name!r}: its config is for the game {g!r}, not {game!r} ({where}); "
                            "every condition of a study plays the same game")
    try:
        model = config_model_of(game)
    except ValueError as exc:
        return game, [], [*problems, f"field 'game': {exc}"]
    conditions = []
    for name, cond, config_path, data in loaded:
        if games[name] != game:
            continue
        payload = {**data, "game": game}
        if config_path is not None:
            payload["source"] = config_path.resolve()
        try:
            config = model.model_validate(payload)
        except ValidationError as exc:
            where = f"config {config_path}" if config_path is not None else f"the {game} default config"
            problems += [f"condition {name!r}: {where} with the condition's settings: {line}"
                         for line in describe_errors(model, exc)]
            continue
        conditions.append(Condition(name, config, cond.console, cond.description))
    return game, conditions, problems


def _fail(path: Path, problems: list[str]) -> StudyError:
    shown = problems[:MAX_REPORTED_ERRORS]
    if len(problems) > len(shown):
        shown.append(f"... and {len(problems) - len(shown)} more")
    if len(shown) == 1:
        return StudyError(f"study {path}: {shown[0]}")
    return StudyError(f"study {path} has {len(problems)} problems:\n  " + "\n  ".join(shown))


def read_study_file(path: str | Path) -> StudyFile:
    """The study file's own fields, checked (no config is read); StudyError otherwise."""
    path = Path(path)
    try:
        data = read_yaml_mapping(path, "study", UniqueKeys)
    except ConfigError as exc:
        raise StudyError(str(exc)) from exc
    try:
        spec = StudyFile.model_validate(data)
    except ValidationError as exc:
        lines = describe_errors(StudyFile, exc)
        raise _fail(path, [_describe(err, line) for err, line in zip(exc.errors(), lines, strict=True)]) from exc
    problems = _design_problems(spec)
    if problems:
        raise _fail(path, problems)
    return spec


def load_study(path: str | Path, config_model_of: ConfigModelOf, default_game: str) -> Study:
    """The study in ``path`` with every condition's config loaded and validated; StudyError naming
    every problem (one line each) otherwise."""
    path = Path(path)
    spec = read_study_file(path)
    game, conditions, problems = _resolve(spec, path, config_model_of, default_game)
    if problems:
        raise _fail(path, problems)
    plan = make_plan(spec.design, list(spec.conditions), games_per_condition=spec.games_per_condition,
                     order=spec.order, quotas=spec.quotas, seed=spec.seed)
    store = spec.store if spec.store is not None else Path(f"{path.stem}.db")
    store = store if store.is_absolute() else path.parent / store
    questionnaires = (questionnaires_of(spec.languages, spec.questionnaires, spec.flow, spec.attention,
                                        spec.partner_places) if spec.questionnaires else None)
    return Study(spec.name, path.resolve(), game, tuple(conditions), plan, store.resolve(), spec.online,
                 questionnaires, spec.analysis)
