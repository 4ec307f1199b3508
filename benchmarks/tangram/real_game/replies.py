"""The agent's reply to one chat line, told apart from its other chat lines.

The game shows every ``chat`` frame the same way, and the frames carry no tag: a turn's own narration
("I placed Blue as the left wall") can reach the page after a line was sent and before its reply
(the line sent as the AI's turn starts always does). The agent's transcript (``transcripts/`` in the
run's folder, one file per socket) tells them apart: the session numbers each ``chatRequest`` it takes
in (its ``frame_in`` record has ``request: N`` and the line as ``message``), and everything done to
answer it carries the same ``request: N``: the ``frame_out`` record of the reply's ``chat`` frame (the
exact text sent) and the closing ``chat_reply`` record (its outcome). A turn's lines carry ``turn: T``
instead. So the reply to a line is the ``chat`` frame recorded under the request that carried the
line; in the event log it is the first agent ``chat`` on the page's socket after the line's
``chatRequest`` with that text, and it was shown when the game printed it (``add_message`` prints each
line it adds to the chat box).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.tangram.real_game.events import Event

Key = tuple[str, int]
"""A chat request in the agent's transcripts: its session and its request number."""


@dataclass(frozen=True)
class Answer:
    key: Key
    text: str | None
    """The chat line sent under the request (None: none sent yet)."""
    outcome: str | None
    """The ``chat_reply`` record's outcome (None: not recorded yet): answered, timeout, error, busy, empty."""


def transcript_records(folder: Path) -> list[dict[str, Any]]:
    """Every record of every transcript in ``folder`` (a line still being written is skipped)."""
    records: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
    return records


def _key(record: dict[str, Any]) -> Key | None:
    session, request = record.get("session"), record.get("request")
    if isinstance(session, str) and isinstance(request, int):
        return session, request
    return None


def answer_to(records: list[dict[str, Any]], line: str, taken: set[Key]) -> Answer | None:
    """The agent's answer to ``line``: under the first chat request carrying it that is not in
    ``taken`` (the requests already matched to earlier lines); None while no such request is recorded."""
    key = next((k for r in records
                if r.get("kind") == "frame_in" and r.get("type") == "chatRequest"
                and str(r.get("message", "")).strip() == line.strip()
                and (k := _key(r)) is not None and k not in taken), None)
    if key is None:
        return None
    text: str | None = None
    outcome: str | None = None
    for record in records:
        if _key(record) != key:
            continue
        frame = record.get("frame")
        if record.get("kind") == "frame_out" and isinstance(frame, dict) and frame.get("type") == "chat" \
                and text is None:
            text = str(frame.get("message", ""))
        elif record.get("kind") == "chat_reply":
            outcome = str(record.get("outcome"))
    return Answer(key, text, outcome)


def chat_request(events: list[Event], since: int, ws: int, line: str) -> int | None:
    """Index of the game's ``chatRequest`` carrying ``line`` on socket ``ws``, from ``since`` on."""
    for index in range(since, len(events)):
        event = events[index]
        if event.src == "game" and event.type == "chatRequest" and event.ws == ws \
                and str(event.msg.get("message", "")).strip() == line.strip():
            return index
    return None


def reply_frame(events: list[Event], since: int, ws: int, text: str) -> int | None:
    """Index of the first agent ``chat`` frame on ``ws`` from ``since`` on that says ``text``."""
    for index in range(since, len(events)):
        event = events[index]
        if event.src == "agent" and event.type == "chat" and event.ws == ws and event.msg.get("message") == text:
            return index
    return None


def shown(events: list[Event], since: int, text: str) -> int | None:
    """Index of the game's console print of ``text`` (the chat box adding it) from ``since`` on."""
    for index in range(since, len(events)):
        event = events[index]
        if event.src == "console" and event.text == text:
            return index
    return None


def last_said(events: list[Event], upto: int, ws: int) -> str:
    """The agent's last chat line on ``ws`` before event ``upto`` ("" when none)."""
    for event in reversed(events[:upto]):
        if event.src == "agent" and event.type == "chat" and event.ws == ws:
            return str(event.msg.get("message", ""))
    return ""


def page_ms(marks: list[Any], line: str, reply: str) -> float | None:
    """From the Send click to the reply shown, on the page's own clock (``browser.PAGE_CLOCK``'s marks:
    [ms, kind, text]): from the last mouse release before the line's chatRequest left the page to the
    game's first print of ``reply`` after it. None when the marks do not hold both."""
    rows = [m for m in marks if isinstance(m, list) and len(m) == 3 and isinstance(m[0], (int, float))]
    sent = next((i for i in range(len(rows) - 1, -1, -1) if rows[i][1] == "chatRequest" and rows[i][2] == line), None)
    if sent is None:
        return None
    click = next((rows[i][0] for i in range(sent - 1, -1, -1) if rows[i][1] == "mouseup"), rows[sent][0])
    printed = next((row[0] for row in rows[sent + 1:] if row[1] == "print" and row[2] == reply), None)
    return None if printed is None else round(float(printed - click), 1)


@dataclass(frozen=True)
class Heard:
    """A line's chatRequest, the reply's frame and its print, as event indexes."""

    request: int
    reply: int
    shown: int | None
    text: str

    def ms(self, events: list[Event]) -> float:
        """From the line's chatRequest to the reply shown (printed; the frame's arrival when the print
        was not seen) as the runner saw them: a fallback for :func:`page_ms` (the browser delivers a
        busy frame's events together, so this can be far off)."""
        end = events[self.shown if self.shown is not None else self.reply].t
        return round(1000 * (end - events[self.request].t), 1)


def find_reply(events: list[Event], records: list[dict[str, Any]], line: str, request: int, ws: int,
               taken: set[Key]) -> tuple[Answer | None, Heard | None]:
    """The transcript's answer to ``line`` and, once its frame is in the event log, where."""
    answer = answer_to(records, line, taken)
    if answer is None or answer.text is None:
        return answer, None
    reply = reply_frame(events, request + 1, ws, answer.text)
    if reply is None:
        return answer, None
    return answer, Heard(request, reply, shown(events, reply + 1, answer.text), answer.text)
