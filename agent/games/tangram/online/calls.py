"""The body of a participant page's call (``POST /api/...``): a flat JSON object of known fields and
types, checked before anything reads it. Anything else is refused with one line saying what is
wrong (HTTP 400), never an error of ours: nesting is counted before the parser recurses (the core's
jsonsafe), and every field's type and size is the model's."""

from __future__ import annotations

import re
from typing import Annotated, Literal, TypeVar

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, ValidationError

from agent.core import jsonsafe
from agent.core.jsonsafe import JSONDepthError
from agent.core.studies.questionnaires import LANGUAGE, MAX_ITEMS, MAX_LONG_CHARS, MAX_OPTIONS, MAX_SHORT_CHARS

MAX_JSON_DEPTH = 20
"""A call's body nested deeper is refused before it is parsed (the calls are flat objects; Python's
JSON parser recurses once per level and gives up at about 1,000)."""


class Call(BaseModel):
    """The body of a page's call (``POST /api/...``): the link's code and what the call says."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    code: str = Field(max_length=200)
    given: bool | None = None
    """/api/consent: the participant agreed."""
    ticket: str | None = Field(None, max_length=200)
    """/api/finished: the game's ticket."""
    exit: int | None = Field(None, ge=-(2**31), lt=2**32)
    """/api/finished: the engine's exit code."""
    how: Literal["exit", "continue"] | None = None
    """/api/finished: the engine quit, or the participant pressed the page's Continue."""
    language: str | None = Field(None, pattern=LANGUAGE)
    """/api/visit: the language the participant chose (or their link's ``lang=``)."""


AnswerValue = Annotated[StrictInt | StrictFloat | Annotated[str, Field(max_length=MAX_LONG_CHARS)]
                        | Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=MAX_OPTIONS + 1)]
                        | None, Field(union_mode="left_to_right")]


class DraftCall(BaseModel):
    """``POST /api/draft``: what the participant entered on their current page so far (kept for a reload)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    code: str = Field(max_length=200)
    step: int = Field(ge=1, le=10_000)
    answers: dict[Annotated[str, Field(max_length=40)], AnswerValue] = Field(default_factory=dict,
                                                                             max_length=MAX_ITEMS)
    other: dict[Annotated[str, Field(max_length=40)], Annotated[str, Field(max_length=MAX_SHORT_CHARS)]] = Field(
        default_factory=dict, max_length=MAX_ITEMS)


class AnswersCall(DraftCall):
    """``POST /api/answers``: the participant's answers to their current page (``step``), checked by the server."""

    language: str | None = Field(None, pattern=LANGUAGE)


class WithdrawCall(BaseModel):
    """``POST /api/withdraw``: stop and delete my data (the page asks the participant to confirm first)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    code: str = Field(max_length=200)
    confirm: Literal[True]


_UNSAFE = re.compile(r"[^\w.-]")


M = TypeVar("M", bound=BaseModel)


def parse_call(raw: bytes, model: type[M] = Call) -> M:  # type: ignore[assignment]
    """A call's body as ``model``; HTTPBadRequest with one line saying what is wrong with it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise web.HTTPBadRequest(text="the body must be JSON in UTF-8\n") from None
    try:
        data = jsonsafe.loads(text, max_depth=MAX_JSON_DEPTH)
    except JSONDepthError:
        raise web.HTTPBadRequest(text=f"the body nests deeper than {MAX_JSON_DEPTH} levels\n") from None
    except ValueError:
        raise web.HTTPBadRequest(text="the body must be a JSON object\n") from None
    if not isinstance(data, dict):
        raise web.HTTPBadRequest(text="the body must be a JSON object\n")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        first = errors[0]
        field = _UNSAFE.sub("?", ".".join(str(part) for part in first["loc"]))[:40] or "body"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise web.HTTPBadRequest(text=f"{field}: {' '.join(first['msg'].split())}{more}\n") from None
