"""Frames exchanged with the game, both ways, as pydantic models.

Incoming frames are accepted in two dialects: the API document's (flat ``position`` array,
``vertices`` beside it, ISO timestamp) and the real game's (``position`` nested with Godot's
``"(x, y)"`` vector text, integer timestamp, ``off_board`` with rotation only, ``on_board`` as a
dict or a list of one-key dicts). Both are normalised into :class:`GameState`.

Outgoing frames are built only through the ``*_frame`` functions below, which guarantee what the
game needs: one of the seven real piece names, plain floats, an ISO-8601 timestamp, and a
serialised size far below Godot's 64 KiB inbound buffer.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.games.tangram.geometry.pieces import PIECE_NAMES

Point = tuple[float, float]

# Godot prints a Vector2 as "(x, y)"; numbers may be bare integers, negative, or use exponents.
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan"
_VECTOR_RE = re.compile(rf"^\s*\(\s*({_NUM})\s*,\s*({_NUM})\s*\)\s*$")

MAX_OUT_FRAME_BYTES = 16 * 1024
"""Every frame we send stays below this: a quarter of Godot's 64 KiB inbound buffer."""
MAX_CHAT_CHARS = 600
PARTNER_LINE_CHARS = 199
"""The length the offline partner's own chat lines (a turn's line, a reply) are cut to."""

# Bounds on what one frame's state may hold. The real game reports 7 pieces of 3 or 4 vertices,
# each colliding with at most the 6 others and the board's edge; anything far beyond is an
# attack or a bug, and its size must not reach the logs, the transcript or the prompt.
MAX_COORD = 10_000.0
"""Largest |coordinate| in board units (the board is about 100 x 100): 1e308 is finite but breaks
the geometry (overflow to inf, then NaN and empty shapes)."""
MAX_ROTATION = 1e6
"""Largest |rotation| in degrees accepted before folding into [0, 360)."""
MAX_PIECE_ENTRIES = 32
"""Entries read per state section; the rest are counted in one ``ignored`` note."""
MAX_VERTICES = 16
MAX_COLLISION_ENTRIES = 64
"""Collision names read per piece; the rest are counted in one ``ignored`` note."""
MAX_NAME_CHARS = 40


class ProtocolError(ValueError):
    """A frame from the game that cannot be understood; the message says exactly why."""


def parse_vector(value: Any) -> Point:
    """Read a 2-D point from Godot text ``"(x, y)"``, a ``[x, y]`` list, or ``{"x":, "y":}``."""
    if isinstance(value, str):
        m = _VECTOR_RE.match(value)
        if not m:
            raise ValueError(f"not a vector: {value[:40]!r}")
        x, y = float(m.group(1)), float(m.group(2))
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        x, y = _number(value[0]), _number(value[1])
    elif isinstance(value, dict) and {"x", "y"} <= value.keys():
        x, y = _number(value["x"]), _number(value["y"])
    else:
        raise ValueError(f"not a vector: {str(value)[:40]!r}")
    if not (math.isfinite(x) and math.isfinite(y)):
        raise ValueError(f"vector is not finite: ({x}, {y})")
    return (x, y)


def _on_board_point(value: Any) -> Point:
    """A point of the board: finite (parse_vector) and within MAX_COORD of the origin."""
    x, y = parse_vector(value)
    if abs(x) > MAX_COORD or abs(y) > MAX_COORD:
        raise ValueError(f"coordinates out of range: ({x:.6g}, {y:.6g}) (at most {MAX_COORD:g} board units)")
    return (x, y)


def utf8_safe(text: str) -> str:
    """The text with lone surrogates replaced by '?': a JSON escape can carry them, UTF-8 cannot,
    and one of them in a prompt would make every later LLM request fail to encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"not a number: {str(value)[:40]!r}")
    try:
        return float(value)
    except OverflowError as exc:  # a 400-digit integer is valid JSON but no float
        raise ValueError("number too large") from exc


class OnBoardPiece(BaseModel):
    """A piece on the board as the game reports it (board units; ``position`` is the marker)."""

    model_config = ConfigDict(extra="ignore")

    position: Point
    vertices: list[Point] = Field(default_factory=list)
    rotation: float = 0.0
    collisions: list[str] = Field(default_factory=list)

    @classmethod
    def from_raw(cls, raw: Any, notes: list[str] | None = None) -> OnBoardPiece:
        """The entry as a piece, or ValueError saying why it cannot be one. ``notes`` collects what
        was cut from an entry that is still used (an absurdly long collision list)."""
        if not isinstance(raw, dict):
            raise ValueError("piece entry is not an object")
        pos = raw.get("position")
        vertices = raw.get("vertices", [])
        if isinstance(pos, dict):  # the real game nests marker and vertices
            vertices = pos.get("vertices", vertices)
            pos = pos.get("position")
        if pos is None:
            raise ValueError("on-board piece has no position")
        if not isinstance(vertices, list):
            raise ValueError("vertices is not a list")
        if len(vertices) > MAX_VERTICES:
            raise ValueError(f"{len(vertices)} vertices (a piece has at most {MAX_VERTICES})")
        rotation = _number(raw.get("rotation", 0.0))
        if not math.isfinite(rotation):
            raise ValueError("rotation is not finite")
        if abs(rotation) > MAX_ROTATION:
            raise ValueError(f"rotation out of range: {rotation:.6g}")
        return cls(position=_on_board_point(pos), vertices=[_on_board_point(v) for v in vertices],
                   rotation=rotation, collisions=_collision_names(raw.get("collisions", []), notes))


def _collision_names(raw: Any, notes: list[str] | None) -> list[str]:
    """The distinct names in a collisions list, at most MAX_COLLISION_ENTRIES read, each clipped."""
    if not isinstance(raw, list):
        raise ValueError("collisions is not a list of names")
    head = raw[:MAX_COLLISION_ENTRIES]
    if not all(isinstance(c, str) for c in head):
        raise ValueError("collisions is not a list of names")
    if len(raw) > len(head) and notes is not None:
        notes.append(f"collisions: {len(raw):,} names, only the first {len(head)} read")
    return list(dict.fromkeys(c[:MAX_NAME_CHARS] for c in head))


class OffBoardPiece(BaseModel):
    model_config = ConfigDict(extra="ignore")

    rotation: float = 0.0


class GameState(BaseModel):
    """The board normalised from either dialect; unknown piece names are dropped, not trusted."""

    on_board: dict[str, OnBoardPiece] = Field(default_factory=dict)
    off_board: dict[str, OffBoardPiece] = Field(default_factory=dict)
    ignored: list[str] = Field(default_factory=list, description="what was dropped, and why")

    @classmethod
    def from_raw(cls, raw: Any) -> GameState:
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise ProtocolError("state is not an object")
        state = cls()
        for section in ("on_board", "off_board"):
            entries, total = _piece_entries(raw.get(section, {}), section)
            if total > len(entries):
                state.ignored.append(f"{section}: {total:,} entries, only the first {len(entries)} read")
            for name, entry in entries:
                if name not in PIECE_NAMES:
                    state.ignored.append(f"{section}: unknown piece {name[:30]!r}")
                    continue
                try:
                    if section == "on_board":
                        notes: list[str] = []
                        state.on_board[name] = OnBoardPiece.from_raw(entry, notes)
                        state.ignored.extend(f"{section}.{name}: {note}" for note in notes)
                    else:
                        rot = _number(entry.get("rotation", 0.0)) if isinstance(entry, dict) else 0.0
                        ok = math.isfinite(rot) and abs(rot) <= MAX_ROTATION
                        state.off_board[name] = OffBoardPiece(rotation=rot if ok else 0.0)
                except (ValueError, ValidationError) as exc:
                    state.ignored.append(f"{section}.{name}: {_short(exc)}")
        # A piece reported in both places is on the board: that is where it can collide.
        for name in state.on_board:
            state.off_board.pop(name, None)
        return state


def _piece_entries(section: Any, label: str) -> tuple[list[tuple[str, Any]], int]:
    """At most MAX_PIECE_ENTRIES (name, entry) pairs, and how many the section holds."""
    if isinstance(section, dict):
        pairs = itertools.islice(section.items(), MAX_PIECE_ENTRIES)
        return [(str(k)[:MAX_NAME_CHARS], v) for k, v in pairs], len(section)
    if isinstance(section, list):  # [{"Red": {...}}, {"Blue": {...}}]
        out: list[tuple[str, Any]] = []
        total = 0
        for item in section:
            if isinstance(item, dict):
                total += len(item)
                room = MAX_PIECE_ENTRIES - len(out)
                out.extend((str(k)[:MAX_NAME_CHARS], v) for k, v in itertools.islice(item.items(), max(0, room)))
        return out, total
    raise ProtocolError(f"state.{label} is neither an object nor a list")


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return str(exc)[:120]


class GameFrame(BaseModel):
    """Any frame from the game, normalised. Images stay base64 text until :mod:`agent.core.images`."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["playRequest", "playFeedback", "chatRequest", "error"]
    objective: str = ""
    message: str = ""
    state: GameState = Field(default_factory=GameState)
    board_img: str | None = None
    drawer_img: str | None = None
    timestamp: str | float | int | None = None

    @field_validator("objective", "message", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        if v is None:
            return ""
        if not isinstance(v, str):
            raise ValueError("must be text")
        return utf8_safe(v)

    @field_validator("board_img", "drawer_img", mode="before")
    @classmethod
    def _image(cls, v: Any) -> str | None:
        if v is None or v == "":
            return None
        if not isinstance(v, str):
            raise ValueError("must be base64 text")
        return v


GAME_FRAME_TYPES: tuple[str, ...] = get_args(GameFrame.model_fields["type"].annotation)


def parse_frame(text: str | bytes) -> GameFrame:
    """Parse one frame from the game or raise :class:`ProtocolError` with a specific reason."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError("binary frame is not UTF-8 text") from exc
    try:
        raw = json.loads(text, parse_constant=_reject_constant)
    except ProtocolError:
        raise
    except (ValueError, RecursionError) as exc:  # ValueError also covers Python's limit on integer digits
        raise ProtocolError(f"frame is not JSON ({_short(exc)})") from exc
    if not isinstance(raw, dict):
        raise ProtocolError(f"frame is a JSON {type(raw).__name__}, not an object")
    ftype = raw.get("type")
    if ftype is None:
        raise ProtocolError("frame has no 'type'")
    if ftype not in GAME_FRAME_TYPES:
        raise ProtocolError(f"unknown frame type {str(ftype)[:40]!r}")
    state = GameState.from_raw(raw.get("state"))
    fields = {k: raw[k] for k in ("objective", "message", "board_img", "drawer_img", "timestamp") if k in raw}
    try:
        return GameFrame(type=ftype, state=state, **fields)
    except ValidationError as exc:
        raise ProtocolError(f"{ftype}: {_short(exc)}") from exc


def _reject_constant(name: str) -> float:
    raise ProtocolError(f"frame contains {name}, which is not JSON")


# ---------------------------------------------------------------- outgoing frames


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _encode(frame: dict[str, Any]) -> str:
    text = json.dumps(frame, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    if len(text.encode("utf-8")) >= MAX_OUT_FRAME_BYTES:
        raise ValueError(f"outgoing {frame['type']} frame would be {len(text)} bytes")
    return text


def clean_chat_text(text: str, limit: int = MAX_CHAT_CHARS) -> str:
    """Make any text safe for the chat box: one short line, no control characters."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(text))
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def play_frame(shape: str, x: float, y: float, rotation: float) -> str:
    if shape not in PIECE_NAMES:
        raise ValueError(f"refusing to send unknown piece {shape!r}")
    values = (float(x), float(y), float(rotation))
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"refusing to send non-finite play {values}")
    return _encode({"type": "play", "shape": shape, "position": [round(values[0], 4), round(values[1], 4)],
                    "rotation": round(values[2], 4), "timestamp": now_iso()})


def finish_frame() -> str:
    return _encode({"type": "finish", "timestamp": now_iso()})


def chat_frame(text: str) -> str:
    text = clean_chat_text(text)
    # The API document names the field "message"; an older game build reads "content". Both are
    # sent so every build shows the line.
    return _encode({"type": "chat", "message": text, "content": text, "timestamp": now_iso()})
