"""Did the agent keep what it agreed to in the chat (``--chat requests``)? Read from the event log alone.

The scripted human of the requests plan says, in the human's turns of one page load:

1. a constraint in English (:data:`KEEP_MINE`): from then on, no ``play`` of the agent may move a
   piece the human dragged onto the board (before or after the line) on that socket;
2. a request in Portuguese (:data:`ASK_PIECE`, for :data:`ASKED_PIECE`): when that piece is still in
   the drawer as the line is sent, the agent's next ``play`` on the socket must be that piece;
3. thanks in Portuguese (:data:`THANKS`).

Every line must get a reply in the language it was written in (told by py3langid, which the agent's
own reading does not decide alone). A piece is "the human's" when the scripted human's drag of it was
accepted by the game (the game printed no overlap). A line is taken from the game's ``chatRequest``
(the agent may answer before the runner notes what it typed).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from benchmarks.tangram.real_game.events import Event

KEEP_MINE = "please dont move the pieces i put down"
ASK_PIECE = "podes por o paralelogramo a seguir?"
ASKED_PIECE = "Brown"
THANKS = "boa, obrigado!"
LANGUAGE_OF = {KEEP_MINE: "en", ASK_PIECE: "pt", THANKS: "pt"}


@functools.cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(["en", "pt", "es", "fr", "de", "it"])
    return identifier


def language(text: str) -> str:
    return str(_identifier().classify(text)[0])


@dataclass
class Reply:
    line: str
    expected: str
    reply: str = ""
    lang: str = ""

    @property
    def right(self) -> bool:
        return bool(self.reply) and self.lang == self.expected


@dataclass
class PromiseReport:
    partner_pieces: list[str] = field(default_factory=list)
    """The pieces the human placed on the socket of the constraint."""
    moved_after_constraint: list[str] = field(default_factory=list)
    """The human's pieces the agent's plays moved after the constraint (should be empty)."""
    constraint_seen: bool = False
    asked_in_drawer: bool | None = None
    """Whether :data:`ASKED_PIECE` was in the drawer when asked for (None: never asked)."""
    next_play: str | None = None
    """The agent's first play after the request."""
    replies: list[Reply] = field(default_factory=list)

    @property
    def request_kept(self) -> bool | None:
        """The request kept (None when it did not apply: not asked, or the piece already placed)."""
        if not self.asked_in_drawer:
            return None
        return self.next_play == ASKED_PIECE

    @property
    def constraint_kept(self) -> bool | None:
        return None if not self.constraint_seen else not self.moved_after_constraint

    def lines(self) -> list[str]:
        out = [f"promises: constraint {_word(self.constraint_kept)} (the human's pieces {self.partner_pieces}, moved "
               f"by the agent after the line: {self.moved_after_constraint}); request for {ASKED_PIECE} "
               f"{_word(self.request_kept)} (next play {self.next_play})"]
        out += [f"  reply to {r.line!r} ({r.expected}): {r.reply!r} [{r.lang or '-'}] {'right' if r.right else 'WRONG'}"
                for r in self.replies]
        return out

    def summary(self) -> dict[str, Any]:
        return {"constraint_kept": self.constraint_kept, "request_kept": self.request_kept,
                "replies_in_language": sum(r.right for r in self.replies), "replies_expected": len(self.replies)}


def _word(kept: bool | None) -> str:
    return "n/a" if kept is None else "KEPT" if kept else "BROKEN"


def _drawer_at(events: list[Event], upto: int, ws: int) -> set[str] | None:
    """The drawer's pieces in the game's last state on ``ws`` before event ``upto``."""
    for event in reversed(events[:upto]):
        if event.src == "game" and event.ws == ws and isinstance(event.msg.get("state"), dict):
            return set(event.msg["state"].get("off_board") or {})
    return None


def check(events: list[Event]) -> PromiseReport:
    report = PromiseReport()
    constraint_ws: int | None = None
    human: dict[int, list[str]] = {}
    waiting: Reply | None = None
    asked_ws: int | None = None
    current_ws = 0
    for index, event in enumerate(events):
        if event.src in ("game", "agent") and event.ws:
            current_ws = event.ws
        if event.src == "human" and event.type == "drag" and event.msg.get("overlaps") == []:
            human.setdefault(current_ws, []).append(str(event.msg.get("shape")))
        elif event.src == "game" and event.type == "chatRequest":
            line = str(event.msg.get("message", ""))
            if line in LANGUAGE_OF:
                waiting = Reply(line, LANGUAGE_OF[line])
                report.replies.append(waiting)
            if line == KEEP_MINE:
                report.constraint_seen, constraint_ws = True, current_ws
            elif line == ASK_PIECE:
                drawer = _drawer_at(events, index, current_ws)
                report.asked_in_drawer = drawer is not None and ASKED_PIECE in drawer
                asked_ws = current_ws
        elif event.src == "agent" and event.type == "chat" and waiting is not None and not waiting.reply:
            waiting.reply = str(event.msg.get("message", ""))
            waiting.lang = language(waiting.reply)
            waiting = None
        elif event.src == "agent" and event.type == "play":
            shape = str(event.msg.get("shape"))
            if event.ws == constraint_ws and shape in human.get(event.ws, []) \
                    and shape not in report.moved_after_constraint:
                report.moved_after_constraint.append(shape)
            if event.ws == asked_ws and report.next_play is None:
                report.next_play = shape
    if constraint_ws is not None:
        report.partner_pieces = human.get(constraint_ws, [])
    return report
