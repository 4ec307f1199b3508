"""A tangram transcript as the steps of a replay: pure functions over parsed records, no I/O.

The replay alternates the human's moves and the AI's turns, as the game does. A step holds the
board the game reported at its end (the state of the last frame that carried one), what moved
since the step before and who moved it, the chat lines of that moment, and for an AI turn the
decisions with their source and reasoning, the plays with the collisions the game reported, the
turn's timings and LLM calls, and the plays the game put back at ``finish``.

Records are read defensively: a field of the wrong type is left out, never trusted; a transcript
cut short (no ``session_end``) gives the steps up to its last record and says so.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agent.games.tangram.geometry.frames import Pose, normalize_rotation, pose_from_marker, rotation_distance
from agent.games.tangram.geometry.pieces import PIECE_NAMES, PIECES
from agent.games.tangram.replay.fields import as_dict, as_list, clip, event_line, num, point, prompt_text

GAME = "tangram"
MAX_STEPS = 2000
"""Steps kept per replay: a 20-turn game has about 41; the rest of a runaway file is cut, and said so."""
MAX_ITEMS = 200
"""Chat lines, decisions, plays, events or LLM calls kept per step."""
SAME_POSE_UNITS = 0.05
SAME_ROTATION_DEG = 0.5
"""Two reported poses closer than this are the same place (the game's numbers are rounded)."""

StepKind = Literal["start", "human", "ai"]


class ReplayError(ValueError):
    """The file is not a transcript this replay can show; the message is one line saying why."""


@dataclass(frozen=True, slots=True)
class Placed:
    """A piece on the board as the state reported it: the marker position, rotation and collisions."""

    piece: str
    marker: tuple[float, float]
    rotation: float
    collisions: tuple[str, ...] = ()

    def pose(self) -> Pose:
        """The exact node pose behind the reported marker (what a ``play`` would have sent)."""
        return pose_from_marker(self.piece, self.marker[0], self.marker[1], self.rotation)


@dataclass(frozen=True, slots=True)
class Board:
    on_board: Mapping[str, Placed]
    off_board: Mapping[str, float]
    """Pieces not on the board, with the rotation the state reported."""

    @staticmethod
    def initial() -> Board:
        """Every piece in the drawer, as a game begins (the state of the first frame replaces it)."""
        return Board({}, {name: PIECES[name].start_rotation for name in PIECE_NAMES})


@dataclass
class ChatLine:
    who: Literal["human", "agent"]
    text: str
    t: float | None
    request: Any = None
    reply_seconds: float | None = None
    outcome: str | None = None


@dataclass
class Step:
    index: int
    kind: StepKind
    turn: int | None
    """The AI turn's id; for a human step, the id of the AI turn that follows it (the ids the
    transcript uses), so ``human-3`` comes right before ``ai-3``."""
    board: Board
    t: float | None = None
    """Seconds since the session's first record when the step's board was reported."""
    moved: list[str] = field(default_factory=list)
    """Pieces whose pose changed since the step before."""
    moves: list[str] = field(default_factory=list)
    """Who moved which piece, one readable line each."""
    put_back: list[str] = field(default_factory=list)
    """Pieces the game put back at ``finish`` (seen on the board that followed)."""
    chats: list[ChatLine] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    plays: list[dict[str, Any]] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    llm: list[dict[str, Any]] = field(default_factory=list)
    outcome: str | None = None
    seconds: float | None = None
    objective: str | None = None
    state_seen: bool = False
    ended_t: float | None = None
    """When an AI turn's ``turn_end`` was written (seconds since the session's first record)."""
    feedback: list[Board] = field(default_factory=list)
    """The board of each ``playFeedback`` of an AI turn, in order: the board after each of its plays."""
    """Whether a frame of this step carried a state (else the board is the step before's)."""

    @property
    def anchor(self) -> str:
        if self.kind == "start":
            return "start"
        return f"{self.kind}-{self.turn}" if self.turn is not None else f"{self.kind}-s{self.index}"

    @property
    def label(self) -> str:
        if self.kind == "start":
            return "Start"
        if self.turn is None:  # a human move no playRequest has closed yet: the transcript ends in it
            return "Human move (still open)" if self.kind == "human" else "AI turn (no id)"
        return f"{'AI turn' if self.kind == 'ai' else 'Human move'} {self.turn}"


@dataclass
class Replay:
    session: str
    tags: dict[str, str]
    start: dict[str, Any]
    steps: list[Step]
    ended: bool
    end_reason: str | None
    last_t: float | None
    notes: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        """The session named by its tags (a participant, a condition), then its id."""
        if self.tags:
            return " · ".join(f"{k}={v}" for k, v in sorted(self.tags.items())) + f" · {self.session}"
        return self.session

    @property
    def truncated(self) -> str | None:
        """One sentence when the transcript ends without its ``session_end``."""
        if self.ended:
            return None
        last = self.steps[-1].label if self.steps else "the start"
        when = f" {self.last_t:.1f} s into the session" if self.last_t is not None else ""
        return (f"The transcript ends without a session_end record (the agent was killed or crashed, or the "
                f"file is still being written): this replay stops at {last}, its last record written{when}.")


def parse_board(state: Any) -> tuple[Board | None, list[str]]:
    """The board of a ``frame_in`` record's ``state`` (as the session normalised it), and what was
    left out; None when there is no usable state."""
    if not isinstance(state, dict):
        return None, []
    notes: list[str] = []
    on: dict[str, Placed] = {}
    off: dict[str, float] = {}
    raw_on = state.get("on_board")
    raw_off = state.get("off_board")
    if not isinstance(raw_on, dict) or not isinstance(raw_off, dict):
        return None, ["a state whose on_board/off_board are not objects (an older transcript format)"]
    for name, entry in raw_on.items():
        if name not in PIECE_NAMES or not isinstance(entry, dict):
            notes.append(f"on_board entry {str(name)[:30]!r} left out")
            continue
        marker = point(entry.get("position"))
        rotation = num(entry.get("rotation"))
        if marker is None or rotation is None:
            notes.append(f"{name}: no usable position or rotation")
            continue
        raw_hits = entry.get("collisions")
        hits = tuple(str(c)[:40] for c in raw_hits[:16]) if isinstance(raw_hits, list) else ()
        on[name] = Placed(name, marker, rotation, hits)
    for name, entry in raw_off.items():
        if name in PIECE_NAMES and name not in on:
            rotation = num(entry.get("rotation")) if isinstance(entry, dict) else None
            off[name] = rotation if rotation is not None else 0.0
    return Board(on, off), notes


def same_place(a: Placed | None, b: Placed | None) -> bool:
    if a is None or b is None:
        return a is b
    return (abs(a.marker[0] - b.marker[0]) <= SAME_POSE_UNITS and abs(a.marker[1] - b.marker[1]) <= SAME_POSE_UNITS
            and rotation_distance(a.rotation, b.rotation) <= SAME_ROTATION_DEG)


def changed(before: Board, after: Board) -> list[str]:
    """Pieces that are somewhere else (or turned, or in or out of the drawer), in the game's order."""
    out = []
    for name in PIECE_NAMES:
        a, b = before.on_board.get(name), after.on_board.get(name)
        if a is None and b is None:
            ra, rb = before.off_board.get(name), after.off_board.get(name)
            if ra is not None and rb is not None and rotation_distance(ra, rb) > SAME_ROTATION_DEG:
                out.append(name)
        elif not same_place(a, b):
            out.append(name)
    return out


def describe_place(board: Board, name: str) -> str:
    placed = board.on_board.get(name)
    if placed is None:
        return "the drawer"
    x, y = placed.marker
    return f"({x:.1f}, {y:.1f}) turned {normalize_rotation(placed.rotation):.0f}°"


def source_class(source: str) -> str:
    """What decided a move: ``console`` (a person at the experimenter console), ``model``,
    ``planner`` or ``fallback``; the full source string stays beside it on the page."""
    if source.startswith("wizard") or any(f"+{k}" in source for k in ("approved", "edited", "replaced")):
        return "console"
    if "fallback" in source:
        return "fallback"
    if source.startswith("llm"):
        return "model"
    if source.startswith("planner"):
        return "planner"
    return source or "unknown"


# ---------------------------------------------------------------- building the steps


def check_transcript(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``session_start`` record of a tangram transcript, or ReplayError saying why not."""
    if not records:
        raise ReplayError("no records (an empty or unreadable file)")
    start = next((r for r in records if r.get("kind") == "session_start"), None)
    if start is None:
        raise ReplayError("no session_start record: not a transcript of an agent session (or cut before it began)")
    game = start.get("game")
    if game is None:
        raise ReplayError("its session_start names no game: written by an agent older than the study records "
                          "(agent_version, game, tags), which this replay needs")
    if game != GAME:
        raise ReplayError(f"a transcript of the game {str(game)[:40]!r}, not tangram: no tangram replay")
    frames = [r for r in records if r.get("kind") == "frame_in"]
    if frames and not any(isinstance(r.get("state"), dict) for r in frames):
        raise ReplayError("its frames carry no state in the form this replay reads (an older transcript format)")
    return dict(start)


class _Builder:
    def __init__(self, t0: float | None) -> None:
        self.t0 = t0
        self.steps: list[Step] = [Step(0, "start", None, Board.initial())]
        self.board = self.steps[0].board
        self.notes: list[str] = []
        self.pending: Step | None = None
        self.by_request: dict[Any, ChatLine] = {}
        self.ai: dict[Any, Step] = {}
        self.turn_started: dict[Any, float] = {}
        self.cut = False

    def rel(self, record: Mapping[str, Any]) -> float | None:
        t = num(record.get("t"))
        return None if t is None or self.t0 is None else round(t - self.t0, 3)

    def new_step(self, kind: StepKind, turn: int | None, t: float | None) -> Step | None:
        if len(self.steps) >= MAX_STEPS:
            if not self.cut:
                self.notes.append(f"more than {MAX_STEPS} steps: the rest of the transcript is not shown")
                self.cut = True
            return None
        step = Step(len(self.steps), kind, turn, self.board, t=t)
        self.steps.append(step)
        return step

    def current(self) -> Step:
        return self.steps[-1]

    def human_step(self, t: float | None) -> Step:
        """The open human step (chat before the next playRequest goes there), opened if needed."""
        cur = self.current()
        if cur.kind == "human" and cur.turn is None:
            return cur
        if cur.kind == "ai" and cur.outcome is None:  # records between turns of an unfinished AI turn
            return cur
        step = self.new_step("human", None, t)
        return step if step is not None else cur

    def set_board(self, step: Step, board: Board, t: float | None) -> None:
        step.board = board
        step.t = t
        step.state_seen = True
        self.board = board


def _add(items: list[Any], item: Any) -> None:
    if len(items) < MAX_ITEMS:
        items.append(item)


def _finish_moves(steps: list[Step]) -> None:
    """Who moved what, step by step, from the boards; plays the game put back are told apart."""
    last_ai: Step | None = None
    for before, step in itertools.pairwise(steps):
        step.moved = changed(before.board, step.board)
        if step.kind == "human":
            played = last_ai.plays[-1]["piece"] if last_ai is not None and last_ai.plays else None
            for name in step.moved:
                # The AI's piece back where it was before that turn: the game put it back at finish.
                if name == played and last_ai is not None and last_ai.index >= 1:
                    pre = steps[last_ai.index - 1].board
                    if same_place(pre.on_board.get(name), step.board.on_board.get(name)):
                        if name not in last_ai.put_back:
                            last_ai.put_back.append(name)
                        step.moves.append(f"the game put {name} back where it was before AI turn "
                                          f"{last_ai.turn} ({describe_place(step.board, name)}): it collided at finish")
                        continue
                step.moves.append(f"human moved {name} from {describe_place(before.board, name)} "
                                  f"to {describe_place(step.board, name)}")
        elif step.kind == "ai":
            for name in step.moved:
                step.moves.append(f"AI moved {name} from {describe_place(before.board, name)} "
                                  f"to {describe_place(step.board, name)}")
            last_ai = step


def build_replay(records: Sequence[Mapping[str, Any]]) -> Replay:
    """The replay of one tangram transcript's records (in file order); ReplayError when it is none."""
    start = check_transcript(records)
    times = [t for t in (num(r.get("t")) for r in records) if t is not None]
    t0 = min(times) if times else None
    b = _Builder(t0)
    end: Mapping[str, Any] | None = None
    clipped = 0
    for r in records:
        kind = r.get("kind")
        if "clipped_chars" in r or "unserialisable" in r:
            clipped += 1
            continue
        t = b.rel(r)
        turn = r.get("turn") if isinstance(r.get("turn"), int) and not isinstance(r.get("turn"), bool) else None
        step = b.ai.get(turn) if turn is not None else None
        if kind == "frame_in":
            ftype = r.get("type")
            board, notes = parse_board(r.get("state"))
            for note in notes[:3]:
                if len(b.notes) < 50:
                    b.notes.append(note)
            if ftype == "playRequest" and turn is not None:
                # The human's move ends with this request, also when it cut an AI turn short.
                cur = b.current()
                human = cur if cur.kind == "human" and cur.turn is None else b.new_step("human", None, t)
                if human is not None:
                    human.turn = turn
                    if board is not None:
                        b.set_board(human, board, t)
                if turn not in b.ai:
                    ai = b.new_step("ai", turn, t)
                    if ai is None:
                        break
                    ai.objective = clip(r.get("objective"), 300)
                    b.ai[turn] = ai
                continue
            if ftype == "playFeedback":
                target = step or b.current()
                if board is not None:
                    b.set_board(target, board, t)
                    _add(target.feedback, board)
                continue
            if ftype == "chatRequest":
                message = clip(r.get("message"))
                target = step if step is not None and step.outcome is None else b.human_step(t)
                if board is not None and target.kind != "ai":
                    b.set_board(target, board, t)
                if message is not None:
                    line = ChatLine("human", message, t, request=r.get("request"))
                    _add(target.chats, line)
                    if r.get("request") is not None:
                        b.by_request[r.get("request")] = line
                continue
            continue
        if kind == "frame_out":
            frame = as_dict(r.get("frame"))
            ftype = frame.get("type")
            target = step or (b.current() if b.current().kind == "ai" and b.current().outcome is None
                              else b.human_step(t))
            if ftype == "chat":
                text = clip(frame.get("message") if isinstance(frame.get("message"), str) else frame.get("content"))
                if text is not None:
                    _add(target.chats, ChatLine("agent", text, t, request=r.get("request")))
            elif ftype == "play":
                pos = point(frame.get("position"))
                piece = frame.get("shape") if frame.get("shape") in PIECE_NAMES else None
                rotation = num(frame.get("rotation"))
                if piece is not None and pos is not None and rotation is not None:
                    started = b.turn_started.get(turn)
                    _add(target.plays, {"piece": piece, "x": pos[0], "y": pos[1], "rotation": rotation,
                                        "after_s": round(t - started, 3) if t is not None and started is not None
                                        else None})
            elif ftype == "finish":
                _add(target.events, "finish sent" + (f" at {t - b.turn_started[turn]:.2f} s into the turn"
                                                     if t is not None and turn in b.turn_started else ""))
            elif ftype == "error":
                _add(target.events, f"error frame sent to the game: {clip(frame.get('message'), 300)}")
            continue
        if kind == "turn_start" and turn is not None:
            if t is not None:
                b.turn_started[turn] = t
            if step is None:  # a turn_start before its playRequest's frame_in (never in practice)
                step = b.new_step("ai", turn, t)
                if step is None:
                    break
                b.ai[turn] = step
            step.objective = step.objective or clip(r.get("objective"), 300)
            continue
        if kind == "turn_end" and step is not None:
            step.outcome = clip(r.get("outcome"), 40) or "ended"
            step.ended_t = t
            step.seconds = num(r.get("seconds"))
            continue
        if kind == "decision":
            target = step or b.current()
            source = clip(r.get("source"), 80) or ""
            pose = r.get("pose") if isinstance(r.get("pose"), dict) else None
            _add(target.decisions, {"source": source, "class": source_class(source),
                                    "reasoning": clip(r.get("reasoning")), "chat": clip(r.get("chat")),
                                    "pose": pose, "candidate": clip(r.get("candidate"), 8),
                                    "adjust": bool(r.get("adjust")), "t": t})
            continue
        if kind == "llm":
            target = step or b.current()
            images = [i for i in as_list(r.get("images")) if isinstance(i, dict)]
            _add(target.llm, {
                "purpose": clip(r.get("purpose"), 40), "outcome": clip(r.get("outcome"), 40) or "ok",
                "model": clip(r.get("model"), 80), "latency_s": num(r.get("latency_s")),
                "elapsed_s": num(r.get("elapsed_s")), "prompt_tokens": num(r.get("prompt_tokens")),
                "completion_tokens": num(r.get("completion_tokens")), "error": clip(r.get("error"), 500),
                "reply": clip(r.get("text")), "prompt": prompt_text(r.get("messages")),
                "images": [{"sha256": clip(i.get("sha256"), 80), "file": clip(i.get("file"), 300),
                            "bytes": num(i.get("bytes"))} for i in images[:8]],
                "request": r.get("request")})
            continue
        if kind == "chat_reply":
            asked = b.by_request.get(r.get("request"))
            if asked is not None:
                asked.reply_seconds = num(r.get("seconds"))
                asked.outcome = clip(r.get("outcome"), 40)
            continue
        if kind == "session_end":
            end = r
            continue
        text = event_line(kind, r)
        if text is not None:
            _add((step or b.current()).events, text)
    steps = b.steps
    # A trailing human step with nothing in it (the game closed right after a turn) is left out.
    if len(steps) > 1 and steps[-1].kind == "human" and steps[-1].turn is None and not (
            steps[-1].chats or steps[-1].state_seen):
        steps.pop()
    _finish_moves(steps)
    notes = b.notes
    if clipped:
        notes.append(f"{clipped} record(s) too long or unserialisable when written: not shown")
    tags = as_dict(start.get("tags"))
    return Replay(session=str(start.get("session") or "?")[:64],
                  tags={str(k)[:40]: str(v)[:80] for k, v in tags.items()},
                  start=dict(start), steps=steps, ended=end is not None,
                  end_reason=clip(end.get("reason"), 80) if end is not None else None,
                  last_t=(max(times) - t0) if times and t0 is not None else None, notes=notes)
