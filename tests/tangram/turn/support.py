"""Drives the pure turn machine on a fake clock, the way the session does on the real one."""

from __future__ import annotations

import json
from typing import Any

from agent.games.tangram.contract import Decision
from agent.games.tangram.protocol import GameFrame, parse_frame
from agent.games.tangram.turn import TurnMachine, TurnRules
from agent.games.tangram.turn import actions as act
from agent.games.tangram.turn import events as ev
from agent.games.tangram.turn.lines import shipped_turn_lines
from agent.games.tangram.turn.timing import ANIMATION_S

LINES = shipped_turn_lines()
"""The shipped words of the turn's own lines: ``LINES("ran_out")``."""

NAMES = ("Red", "Cream", "Blue", "Green", "Yellow", "Purple", "Brown")
DRAWER = {"Red": 180.0, "Cream": 90.0, "Blue": 225.0, "Green": 0.0, "Yellow": -90.0, "Purple": 45.0, "Brown": 0.0}


def game_frame(ftype: str, on_board: dict[str, tuple[float, float, float, list[str]]] | None = None) -> GameFrame:
    board = {name: {"position": {"position": f"({x}, {y})", "vertices": []}, "rotation": r, "collisions": c}
             for name, (x, y, r, c) in (on_board or {}).items()}
    off = {n: {"rotation": DRAWER[n]} for n in NAMES if n not in board}
    state = {"on_board": board, "off_board": off}
    return parse_frame(json.dumps({"type": ftype, "objective": "A house", "state": state,
                                   "board_img": "", "drawer_img": "", "timestamp": 3}))


class Driver:
    """One machine, a clock that only moves when told, and the session's bookkeeping: timers fire in
    time order on :meth:`advance`, and every SendPlay / SendFinish is answered with FrameSent at once
    (``auto_sent=False`` leaves that to the test)."""

    def __init__(self, deadline: float = 10.0, max_feedback_iterations: int = 3, *,
                 thinking_after_s: float | None = None, thinking_line: str = "Let me think about this one.",
                 auto_sent: bool = True) -> None:
        self.machine = TurnMachine(TurnRules(deadline, max_feedback_iterations, thinking_after_s, thinking_line,
                                             LINES))
        self.now = 0.0
        self.timers: dict[str, float] = {}
        self.actions: list[act.Action] = []
        self.sent: list[tuple[float, act.Action]] = []
        """(time, SendPlay | SendFinish | Say), as the game would receive them."""
        self.asks: list[act.AskPlayer] = []
        self.cancelled: list[int] = []
        self.auto_sent = auto_sent
        self.turns = 0
        self.feedback_at: list[float] = []

    # ------------------------------------------------------------------ feeding

    def feed(self, event: ev.Event) -> list[act.Action]:
        out = self.machine.handle(event)
        done: list[act.Action] = []
        for action in out:
            done.append(action)
            self.actions.append(action)
            if isinstance(action, act.SetTimer):
                self.timers[action.name] = action.at
            elif isinstance(action, act.AskPlayer):
                self.asks.append(action)
            elif isinstance(action, act.CancelPlayer):
                self.cancelled.append(action.ask_id)
            elif isinstance(action, (act.SendPlay, act.SendFinish, act.Say)):
                if isinstance(action, act.Say) and not action.text.strip():
                    continue
                self.sent.append((self.now, action))
                if self.auto_sent and not isinstance(action, act.Say):
                    kind = "play" if isinstance(action, act.SendPlay) else "finish"
                    done.extend(self.feed(ev.FrameSent(self.now, kind, True)))
        return done

    def advance(self, seconds: float) -> None:
        """Move the clock, firing every timer that falls due on the way, in time order."""
        until = self.now + seconds
        while True:
            due = [(at, name) for name, at in self.timers.items() if at <= until]
            if not due:
                break
            at, name = min(due)
            del self.timers[name]
            self.now = max(self.now, at)
            self.feed(ev.Timer(self.now, name))
        self.now = until

    # ------------------------------------------------------------------ the game's side

    def request(self, board: dict[str, tuple[float, float, float, list[str]]] | None = None) -> list[act.Action]:
        self.turns += 1
        return self.feed(ev.TurnRequested(self.now, self.turns, game_frame("playRequest", board)))

    def decide(self, decision: Decision, ask: act.AskPlayer | None = None) -> list[act.Action]:
        ask = ask or self.asks[-1]
        return self.feed(ev.DecisionReady(self.now, ask.ask_id, decision))

    def feedback(self, board: dict[str, tuple[float, float, float, list[str]]] | None = None) -> list[act.Action]:
        self.feedback_at.append(self.now)
        return self.feed(ev.Feedback(self.now, game_frame("playFeedback", board)))

    # ------------------------------------------------------------------ reading

    def kinds(self) -> list[str]:
        """What the game received, in order: "chat", "play", "finish"."""
        return [{"Say": "chat", "SendPlay": "play", "SendFinish": "finish"}[type(a).__name__] for _, a in self.sent]

    def said(self) -> list[str]:
        return [a.text for _, a in self.sent if isinstance(a, act.Say)]

    def at(self, kind: type) -> list[float]:
        return [t for t, a in self.sent if isinstance(a, kind)]

    def records(self, kind: str) -> list[dict[str, Any]]:
        return [a.fields for a in self.actions if isinstance(a, act.Record) and a.kind == kind]

    def check_rules(self) -> None:
        """One finish per turn that was not abandoned, and no play or finish while the last play
        still animates (less than the animation after it, its feedback not yet in)."""
        abandoned = sum(r["outcome"] == "cancelled" for r in self.records("turn_end"))
        assert self.kinds().count("finish") == self.turns - abandoned, self.kinds()
        last_play: float | None = None
        for t, action in self.sent:
            if isinstance(action, (act.SendPlay, act.SendFinish)):
                if last_play is not None:
                    answered = any(last_play <= f <= t for f in self.feedback_at)
                    assert answered or t >= last_play + ANIMATION_S, (t, action, last_play)
                if isinstance(action, act.SendPlay):
                    last_play = t
