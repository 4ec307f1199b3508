"""What a console page may send, as bounded pydantic models; anything else is refused with a reason."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from agent.games.tangram.config import ConsoleMode
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PieceName

MAX_CHAT_CHARS = 500
"""A chat line the experimenter writes; the game's chat box (and its 64 KiB buffer) want short lines."""
MAX_WHO_CHARS = 40
MAX_MESSAGE_BYTES = 16 * 1024
"""Largest WebSocket message a page may send."""

Who = Annotated[str, Field(max_length=MAX_WHO_CHARS)]
GameId = Annotated[str, Field(min_length=1, max_length=64)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PoseIn(_Message):
    piece: PieceName
    x: float = Field(ge=-50, le=150)
    y: float = Field(ge=-50, le=150)
    rotation: float = Field(ge=-3600, le=3600)

    @field_validator("x", "y", "rotation")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v

    def pose(self) -> Pose:
        return Pose(self.piece, self.x, self.y, self.rotation)


class SetMode(_Message):
    type: Literal["mode"]
    game: GameId
    mode: ConsoleMode
    who: Who = "experimenter"


class CheckPose(_Message):
    type: Literal["check"]
    game: GameId
    seq: int = Field(ge=0, le=2**53)
    pose: PoseIn


class Verdict(_Message):
    """An answer to an open review: the agent's proposal approved, edited, replaced or skipped; or,
    in wizard mode, the experimenter's own move ("wizard")."""

    type: Literal["verdict"]
    game: GameId
    review: int = Field(ge=0, le=2**53)
    action: Literal["approve", "edit", "replace", "skip", "wizard"]
    pose: PoseIn | None = None
    chat: str | None = Field(None, max_length=MAX_CHAT_CHARS)
    who: Who = "experimenter"


class Say(_Message):
    type: Literal["say"]
    game: GameId
    text: str = Field(min_length=1, max_length=MAX_CHAT_CHARS)
    who: Who = "experimenter"


class StudyAction(_Message):
    """A study's control (served with --study): start the next participant, pause, resume or drop one."""

    type: Literal["study"]
    action: Literal["next", "pause", "resume", "drop"]
    participant: str = Field(min_length=1, max_length=40)
    who: Who = "experimenter"


PageMessage = Annotated[SetMode | CheckPose | Verdict | Say | StudyAction, Field(discriminator="type")]
PAGE_MESSAGE: TypeAdapter[SetMode | CheckPose | Verdict | Say | StudyAction] = TypeAdapter(PageMessage)
