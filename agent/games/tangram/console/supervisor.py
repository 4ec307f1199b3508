"""One game session as the console sees it, and the experimenter's hand in it.

A :class:`GameSupervisor` is made for each session by the console's player source, together with
a :class:`ConsolePlayer` that wraps the session's real player. The session finds the supervisor on
its player (see ``Supervisor`` in the contract module) and hands itself over as a ``SessionLine``
(who it is, and its chat: nothing more of it); the supervisor listens to the session's transcript
(``Transcript.listen``) and is handed every frame that arrives.

Modes, per game, switchable at any time:

- *autonomous*: the player decides; nothing waits.
- *supervised*: each decision of the player (move with its chat line, and each chat reply) is held
  open as a review until the experimenter approves, edits, replaces or skips it, or until the
  view's ``decide_by`` passes: then the proposal goes out as it was.
- *wizard*: the real player is not asked. The experimenter composes the move and the chat; the
  planner's suggestion is shown, and played (or the turn passed, by config) if nobody acts in time.

Every wait ends by ``decide_by`` (the moment the session needs the decision to still repair it,
play it and see the game's feedback within the turn's deadline), so no experimenter, closed tab or
slow browser can make a turn late. Every intervention is a transcript record naming who made it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agent.core.transcript import Transcript
from agent.games.tangram.config import Config, ConsoleMode
from agent.games.tangram.console.editor import VIEWBOX, Check, check_pose, outline_json, pieces_json, pose_json
from agent.games.tangram.console.messages import Verdict
from agent.games.tangram.contract import Decision, Player, SessionLine, TurnView, board_of
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.protocol import GameFrame, GameState, clean_chat_text

log = logging.getLogger(__name__)

MAX_CHAT_LINES = 100
MAX_TURNS_SHOWN = 50
MAX_REASONING_CHARS = 2000
CHAT_MARGIN_S = 1.5
"""A chat review closes this long before the session's own chat time-out would answer for it."""
ReviewKind = Literal["play", "adjust", "chat"]


@dataclass
class Review:
    """A decision held open for the experimenter."""

    id: int
    kind: ReviewKind
    mode: ConsoleMode
    opened: float
    until: float
    """Event-loop time at which the default goes out."""
    turn: int | None
    proposal: Decision | None = None
    """The player's move (supervised play/adjust)."""
    proposal_check: Check | None = None
    text: str | None = None
    """The player's chat reply (supervised chat)."""
    suggestion: Decision | None = None
    """The planner's move (wizard play/adjust)."""
    suggestion_text: str | None = None
    """The planner's chat reply (wizard chat)."""
    message: str = ""
    """The participant's chat line this review answers (chat reviews)."""
    future: asyncio.Future[Verdict] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    closed_by: str = "deadline"
    """Who is named when the default goes out: the deadline, or whoever switched to autonomous."""


MAX_SALVAGES_SHOWN = 12
"""Per turn and list: a model answering nonsense cannot grow a turn's row without bound."""


@dataclass
class TurnLog:
    turn: int
    started: float
    started_loop: float
    decisions: list[dict[str, Any]] = field(default_factory=list)
    repairs: list[dict[str, Any]] = field(default_factory=list)
    salvages: list[dict[str, Any]] = field(default_factory=list)
    """What was changed in the model's answer to play it (salvage records), at most MAX_SALVAGES_SHOWN."""
    reasks: list[str] = field(default_factory=list)
    """The problem of each corrective re-ask sent this turn."""
    plays: int = 0
    interventions: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    outcome: str | None = None
    seconds: float | None = None


class GameSupervisor:
    """Everything the console knows about one session, and the reviews it holds open."""

    def __init__(self, config: Config, transcript: Transcript, on_change: Callable[[GameSupervisor], None],
                 on_notice: Callable[[GameSupervisor, str], None] | None = None) -> None:
        self.config = config
        self.id = transcript.session_id
        self.transcript = transcript
        transcript.listen(self._on_record)  # the console reads along; the file is unchanged
        self._on_change = on_change
        self._on_notice = on_notice
        """A line for the experimenter about this game (a spend cap switched it to the planner)."""
        self.session: SessionLine | None = None
        self.mode: ConsoleMode = config.console.default_mode
        self.peer = "?"
        self.player_name = "?"
        self.objective = ""
        self.state = GameState()
        self.board_img: str | None = None
        self.drawer_img: str | None = None
        self.image_versions = {"board": 0, "drawer": 0, "model_board": 0, "model_drawer": 0}
        self.model_images: dict[str, bytes | None] = {"model_board": None, "model_drawer": None}
        """The pictures exactly as the LLM saw them for its latest decision (marks included)."""
        self.chat: deque[dict[str, Any]] = deque(maxlen=MAX_CHAT_LINES)
        self.history: deque[TurnLog] = deque(maxlen=MAX_TURNS_SHOWN)
        self.current: TurnLog | None = None
        self.reviews: dict[int, Review] = {}
        self.tokens = {"prompt": 0, "completion": 0}
        self.ended: str | None = None
        self.started = time.time()
        self._review_ids = itertools.count(1)
        self._authored: deque[tuple[str, str]] = deque(maxlen=16)
        """Chat lines written at the console, with who wrote them, until the session sends them."""
        self._chat_planner: Any = None
        self.study: dict[str, Any] | None = None
        """Serving a study: the game's study, participant, condition, order and attempt (its session_start)."""
        self.spend_cap: str | None = None
        """Why a spend cap has the offline planner play this game instead of the LLM (an online study)."""
        self._begun = False
        """The session's session_start was recorded."""
        self.urgent = False
        """A review just opened: the pages should hear of it now, not at the next coalesced update."""

    # ------------------------------------------------------------------ the session's side

    def attach(self, session: SessionLine) -> None:
        self.session = session
        self.peer = session.peer
        self.player_name = session.player_name
        self._changed()

    def frame_in(self, frame: GameFrame) -> None:
        if frame.objective:
            self.objective = frame.objective
        if frame.type in ("playRequest", "playFeedback"):
            self.state = frame.state
            # The session keeps the frame (and its images) only for the turn; keeping the strings
            # here costs nothing more while the frame lives and one frame's worth after.
            for key in ("board", "drawer"):
                value = getattr(frame, f"{key}_img")
                if value is not None and value != getattr(self, f"{key}_img"):
                    setattr(self, f"{key}_img", value)
                    self.image_versions[key] += 1
        if frame.type == "chatRequest" and frame.message.strip():
            self._chat_line("participant", frame.message)
        self._changed()

    def _on_record(self, kind: str, data: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        cur = self.current
        if kind == "session_start":
            self.player_name = str(data.get("player", self.player_name))
            tags = data.get("tags")
            if data.get("study") is not None and isinstance(tags, dict):
                self.study = {"study": str(data["study"]), "attempt": data.get("attempt"),
                              **{k: str(tags[k]) for k in ("participant", "condition", "order") if k in tags}}
            self._begun = True
            if self.spend_cap is not None:  # capped before it started
                self._notice(f"{self._who()}: {self.spend_cap}; the offline planner plays this game instead of the LLM")
        elif kind == "turn_start":
            self.current = TurnLog(int(data.get("turn", 0)), time.time(), loop.time())
        elif kind == "decision" and cur is not None:
            pose = data.get("pose")
            cur.decisions.append({"source": data.get("source"), "chat": data.get("chat"), "pose": pose,
                                  "outline": _outline_of(pose),
                                  "reasoning": str(data.get("reasoning") or "")[:MAX_REASONING_CHARS],
                                  "adjust": bool(data.get("adjust"))})
        elif kind == "salvage" and cur is not None:
            if len(cur.salvages) < MAX_SALVAGES_SHOWN:
                cur.salvages.append({k: str(data.get(k) or "")[:200] for k in ("salvage", "said", "played", "why")})
        elif kind == "reask" and cur is not None:
            if data.get("sent") and len(cur.reasks) < MAX_SALVAGES_SHOWN:
                cur.reasks.append(str(data.get("problem") or "?")[:40])
        elif kind == "repair" and cur is not None:
            cur.repairs.append({k: data.get(k) for k in ("proposed", "repaired", "displacement", "reason")})
        elif kind == "frame_out":
            frame = data.get("frame") or {}
            if frame.get("type") == "play" and cur is not None:
                cur.plays += 1
            elif frame.get("type") == "chat":
                self._chat_out(str(frame.get("message", "")))
        elif kind == "llm":
            prompt, completion = int(data.get("prompt_tokens") or 0), int(data.get("completion_tokens") or 0)
            self.tokens["prompt"] += prompt
            self.tokens["completion"] += completion
            if cur is not None:
                cur.prompt_tokens += prompt
                cur.completion_tokens += completion
                cur.llm_seconds += float(data.get("latency_s") or 0.0)
        elif kind == "intervention" and cur is not None and data.get("turn") == cur.turn:
            cur.interventions.append({k: data.get(k) for k in ("who", "action", "about")})
        elif kind == "turn_end" and cur is not None and data.get("turn") == cur.turn:
            cur.outcome = str(data.get("outcome"))
            cur.seconds = data.get("seconds")
            self.history.append(cur)
            self.current = None
        elif kind == "spend_cap" and self.spend_cap is None:
            self.spend_cap = str(data.get("reason") or "a spend cap")
            if self._begun:  # else told at session_start, which names the participant
                self._notice(f"{self._who()}: {self.spend_cap}; the offline planner plays the rest of this game")
        elif kind == "session_end":
            self.ended = str(data.get("reason", "ended"))
            for review in list(self.reviews.values()):
                if not review.future.done():
                    review.future.cancel()
        else:
            return
        self._changed()

    def _model_saw(self, images: tuple[bytes, ...]) -> None:
        """Keep the pictures the LLM got for this decision (board first), for the page."""
        if not images:
            return
        for key, data in zip(("model_board", "model_drawer"), (*images, None, None), strict=False):
            self.model_images[key] = data
            self.image_versions[key] += 1
        self._changed()

    def _chat_line(self, by: str, text: str) -> None:
        self.chat.append({"t": round(time.time(), 3), "by": by, "text": text[:MAX_REASONING_CHARS]})

    def _chat_out(self, text: str) -> None:
        for i, (line, who) in enumerate(self._authored):
            if line == text:
                del self._authored[i]
                self._chat_line(f"experimenter ({who})", text)
                return
        self._chat_line("agent", text)

    def _changed(self) -> None:
        try:
            self._on_change(self)
        except Exception:
            log.exception("console update failed")

    def _notice(self, text: str) -> None:
        if self._on_notice is None:
            return
        try:
            self._on_notice(self, text)
        except Exception:
            log.exception("console notice failed")

    def _who(self) -> str:
        """The game as a notice names it: its participant and condition in a study, else its session."""
        study = self.study or {}
        if "participant" in study:
            return f"{study['participant']}'s game ({study.get('condition', '?')})"
        return f"game {self.id}"

    # ------------------------------------------------------------------ decisions (ConsolePlayer)

    def _until(self, view: TurnView) -> float:
        loop = asyncio.get_running_loop()
        if view.decide_by is not None:
            return view.decide_by
        return loop.time() + max(0.5, self.config.turn.deadline - CHAT_MARGIN_S)

    async def decide(self, kind: ReviewKind, view: TurnView, propose: Callable[[], Awaitable[Decision]]) -> Decision:
        """The turn's move: the player's (autonomous), reviewed (supervised) or the experimenter's (wizard)."""
        until = self._until(view)
        turn = self.current.turn if self.current is not None else None
        if self.mode == "wizard":
            suggestion = await self._suggest(view, until)
            review = self._open(kind, "wizard", until, turn, suggestion=suggestion)
            verdict = await self._wait(review)
            if verdict is None:
                if self.config.console.wizard_fallback == "suggestion" and suggestion is not None:
                    decision = replace(suggestion, source="wizard-fallback", reasoning="nobody acted in time: "
                                       f"the planner's suggestion. {suggestion.reasoning}")
                else:
                    decision = Decision(None, "", "nobody acted in time: pass", "wizard-fallback")
                self._intervened(review, review.closed_by, "fallback", decision=decision)
                return decision
            return self._wizard_decision(review, verdict)
        proposal = await propose()
        self._model_saw(proposal.images)
        if self.mode != "supervised":  # the mode may have changed while the player thought
            return proposal
        check = None
        if proposal.pose is not None:
            check = await self._off_loop(check_pose, proposal.pose, board_of(view.state), until=until)
        review = self._open(kind, "supervised", until, turn, proposal=proposal, proposal_check=check)
        verdict = await self._wait(review)
        if verdict is None:
            self._intervened(review, review.closed_by, "fallback", decision=proposal)
            return replace(proposal, source=f"{proposal.source}+unreviewed")
        return self._supervised_decision(review, proposal, verdict)

    async def reply(self, view: TurnView, propose: Callable[[], Awaitable[str]]) -> str:
        """A chat reply: the player's, reviewed, or the experimenter's."""
        until = self._until(view)
        if self.mode == "wizard":
            suggestion = await self._chat_suggestion(view, until)
            review = self._open("chat", "wizard", until, None, suggestion_text=suggestion, message=view.message)
            verdict = await self._wait(review)
            if verdict is None:
                text = suggestion if self.config.console.wizard_fallback == "suggestion" and suggestion else ""
                self._intervened(review, review.closed_by, "fallback", chat=text)
                return text
            text = "" if verdict.action == "skip" else (verdict.chat or "")
            self._intervened(review, verdict.who, _wizard_action(verdict), chat=text)
            return self._authoring(text, verdict.who)
        text = await propose()
        if self.mode != "supervised":
            return text
        review = self._open("chat", "supervised", until, None, text=text, message=view.message)
        verdict = await self._wait(review)
        if verdict is None:
            self._intervened(review, review.closed_by, "fallback", chat=text)
            return text
        if verdict.action == "approve":
            final = text
        elif verdict.action == "skip":
            final = ""
        else:
            final = verdict.chat if verdict.chat is not None else text
        self._intervened(review, verdict.who, verdict.action, chat=final)
        return final if final == text else self._authoring(final, verdict.who)

    def _supervised_decision(self, review: Review, proposal: Decision, verdict: Verdict) -> Decision:
        who, action = verdict.who, verdict.action
        if action == "approve":
            decision = replace(proposal, source=f"{proposal.source}+approved")
        elif action == "skip":
            decision = Decision(None, "", f"skipped by {who}; the agent proposed: {proposal.chat}",
                                f"{proposal.source}+skipped")
        else:  # edit / replace (a "wizard" verdict on a supervised review counts as a replacement)
            pose = verdict.pose.pose() if verdict.pose is not None else (proposal.pose if action == "edit" else None)
            chat = verdict.chat if verdict.chat is not None else (proposal.chat if action == "edit" else "")
            label = "edited" if action == "edit" else "replaced"
            decision = Decision(pose, chat, f"{label} by {who}; the agent proposed {pose_json(proposal.pose)}: "
                                f"{proposal.reasoning}"[:MAX_REASONING_CHARS], f"{proposal.source}+{label}")
        self._intervened(review, who, action, decision=decision)
        if decision.chat != proposal.chat:
            self._authoring(decision.chat, who)
        return decision

    def _wizard_decision(self, review: Review, verdict: Verdict) -> Decision:
        pose = verdict.pose.pose() if verdict.pose is not None and verdict.action != "skip" else None
        if verdict.action == "approve" and review.suggestion is not None and verdict.pose is None:
            pose = review.suggestion.pose  # "play the suggestion"
        if verdict.chat is not None:
            chat = verdict.chat
        else:
            chat = review.suggestion.chat if verdict.action == "approve" and review.suggestion is not None else ""
        decision = Decision(pose, chat, f"wizard: {verdict.who}", "wizard")
        self._intervened(review, verdict.who, _wizard_action(verdict), decision=decision)
        self._authoring(chat, verdict.who)
        return decision

    def _authoring(self, text: str, who: str) -> str:
        if text.strip():
            self._authored.append((clean_chat_text(text), who))
        return text

    async def _suggest(self, view: TurnView, until: float) -> Decision | None:
        from agent.games.tangram.offline.hint import planner_hint

        # Who moved each piece comes from the session's record: this planner played none of the turns.
        found = await self._off_loop(planner_hint, view.objective, view.state, self.config.planner.default_figure,
                                     None, view.movers, until=until)
        if found is None:
            return None
        decision, hint = found
        return replace(decision, reasoning=hint, source="planner")

    async def _chat_suggestion(self, view: TurnView, until: float) -> str | None:
        if self._chat_planner is None:
            from agent.games.tangram.offline.agent import OfflineAgent

            # Its own planner: a suggestion must not change the real player's plan.
            self._chat_planner = OfflineAgent(default_figure=self.config.planner.default_figure)
        board, movers = view.board_with_landing()
        result = await self._off_loop(self._chat_planner.chat, view.objective, board, view.message, movers,
                                      until=until)
        return result if isinstance(result, str) else None

    async def _off_loop(self, fn: Callable[..., Any], *args: Any, until: float) -> Any:
        """Geometry and planning take milliseconds of shapely: off the event loop, and never past ``until``."""
        try:
            async with asyncio.timeout_at(until):
                return await asyncio.to_thread(fn, *args)
        except TimeoutError:
            return None
        except Exception:
            log.exception("console: %s failed", getattr(fn, "__name__", "helper"))
            return None

    def _open(self, kind: ReviewKind, mode: ConsoleMode, until: float, turn: int | None, **fields: Any) -> Review:
        loop = asyncio.get_running_loop()
        review = Review(next(self._review_ids), kind, mode, loop.time(), until, turn, **fields)
        self.reviews[review.id] = review
        self.urgent = True
        self._changed()
        return review

    async def _wait(self, review: Review) -> Verdict | None:
        """The experimenter's verdict, or None when ``review.until`` passes first."""
        try:
            async with asyncio.timeout_at(review.until):
                return await asyncio.shield(review.future)
        except TimeoutError:
            if review.future.done() and not review.future.cancelled():
                return review.future.result()  # the verdict came in the same instant: it counts
            return None
        except asyncio.CancelledError:
            if review.future.cancelled() and not _current_task_cancelling():
                return None  # the session ended under the review; the turn is being cancelled anyway
            raise
        finally:
            self.reviews.pop(review.id, None)
            if not review.future.done():
                review.future.cancel()
            self._changed()

    def _intervened(self, review: Review, who: str, action: str, *, decision: Decision | None = None,
                    chat: str | None = None) -> None:
        loop = asyncio.get_running_loop()
        data: dict[str, Any] = {"who": who, "action": action, "about": review.kind, "mode": review.mode,
                                "review": review.id, "turn": review.turn,
                                "seconds_left": round(review.until - loop.time(), 3)}
        if review.proposal is not None:
            data["proposed"] = {"pose": pose_json(review.proposal.pose), "chat": review.proposal.chat}
        if review.text is not None:
            data["proposed"] = {"chat": review.text}
        if review.suggestion is not None:
            data["suggested"] = {"pose": pose_json(review.suggestion.pose)}
        if review.suggestion_text is not None:
            data["suggested"] = {"chat": review.suggestion_text}
        if decision is not None:
            data["final"] = {"pose": pose_json(decision.pose), "chat": decision.chat}
        if chat is not None:
            data["final"] = {"chat": chat}
        self.transcript.record("intervention", **data)

    # ------------------------------------------------------------------ the console's side

    def resolve(self, verdict: Verdict) -> str | None:
        """Close a review with the experimenter's verdict; returns why not, or None."""
        review = self.reviews.get(verdict.review)
        if review is None or review.future.done():
            return "that decision is no longer open (it was answered, or its time ran out)"
        if review.kind == "chat" and verdict.pose is not None:
            return "a chat reply has no move"
        if review.mode == "wizard" and verdict.action in ("edit", "replace"):
            return "in wizard mode, send your own move (or pass)"
        if review.mode == "supervised" and verdict.action == "wizard":
            return "this game is supervised: approve, edit, replace or skip the agent's proposal"
        if verdict.action == "replace" and verdict.pose is None and review.kind != "chat":
            return "a replacement needs a move (or use skip)"
        review.future.set_result(verdict)
        return None

    def set_mode(self, mode: ConsoleMode, who: str) -> None:
        if mode == self.mode:
            return
        previous, self.mode = self.mode, mode
        self.transcript.record("console_mode", who=who, mode=mode, previous=previous)
        if mode == "autonomous":
            # Open reviews go out with their defaults now: the agent runs on its own again.
            for review in list(self.reviews.values()):
                if not review.future.done():
                    review.closed_by = f"{who} (switched to autonomous)"
                    review.future.cancel()
        self._changed()

    async def say(self, text: str, who: str) -> bool:
        session = self.session
        if session is None or self.ended is not None:
            return False
        text = clean_chat_text(text)
        self._authoring(text, who)
        self.transcript.record("intervention", who=who, action="say", about="chat", mode=self.mode,
                               turn=self.current.turn if self.current is not None else None, final={"chat": text})
        return await session.say(text)

    def board(self) -> dict[str, Pose]:
        return board_of(self.state)

    def _image_present(self, which: str) -> bool:
        if which in self.model_images:
            return self.model_images[which] is not None
        return bool(getattr(self, f"{which}_img"))

    def view(self) -> dict[str, Any]:
        """The game as the page draws it (no images: those are fetched by version)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        turn = None
        if self.current is not None:
            cur = self.current
            turn = {"turn": cur.turn, "elapsed_s": round(now - cur.started_loop, 2),
                    "deadline_s": self.config.turn.deadline, **_turn_json(cur)}
        return {
            "id": self.id, "peer": self.peer, "player": self.player_name, "mode": self.mode,
            "objective": self.objective, "ended": self.ended, "started": self.started,
            "images": {k: (v if self._image_present(k) else None) for k, v in self.image_versions.items()},
            "viewbox": VIEWBOX, "pieces": pieces_json(self.state), "off_board": sorted(self.state.off_board),
            "turn": turn, "reviews": [_review_json(r, now) for r in sorted(self.reviews.values(), key=lambda r: r.id)],
            "chat": list(self.chat), "history": [_turn_json(t) for t in reversed(self.history)],
            "tokens": dict(self.tokens), "study": self.study, "spend_cap": self.spend_cap,
        }


class ConsolePlayer(Player):
    """The session's player with the console in the loop; the session sees an ordinary player."""

    supervisor: GameSupervisor

    def __init__(self, inner: Player, supervisor: GameSupervisor) -> None:
        self.inner = inner
        self.supervisor = supervisor
        self.name = inner.name
        self.uses_images = inner.uses_images
        self.marks_board = inner.marks_board

    async def play(self, view: TurnView) -> Decision:
        return await self.supervisor.decide("play", view, lambda: self.inner.play(view))

    async def adjust(self, view: TurnView) -> Decision:
        return await self.supervisor.decide("adjust", view, lambda: self.inner.adjust(view))

    async def chat(self, view: TurnView) -> str:
        return await self.supervisor.reply(view, lambda: self.inner.chat(view))

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.inner.aclose()


def _wizard_action(verdict: Verdict) -> str:
    """How a wizard's verdict is recorded: "approve" there means taking the planner's suggestion."""
    return "suggestion" if verdict.action == "approve" else verdict.action


def _outline_of(pose: Any) -> list[list[float]] | None:
    """The outline of a pose as the session records it, for the overlay while the turn runs."""
    try:
        return outline_json(Pose(str(pose["piece"]), float(pose["x"]), float(pose["y"]), float(pose["rotation"])))
    except (KeyError, TypeError, ValueError):
        return None


def _current_task_cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _decision_json(decision: Decision | None, check: Check | None = None) -> dict[str, Any] | None:
    if decision is None:
        return None
    out: dict[str, Any] = {"pose": pose_json(decision.pose), "chat": decision.chat, "source": decision.source,
                           "reasoning": decision.reasoning[:MAX_REASONING_CHARS],
                           "outline": outline_json(decision.pose) if decision.pose is not None else None}
    if check is not None:
        out["check"] = check.to_json()
    return out


def _review_json(review: Review, now: float) -> dict[str, Any]:
    return {"id": review.id, "kind": review.kind, "mode": review.mode, "turn": review.turn,
            "remaining_s": round(max(0.0, review.until - now), 2), "total_s": round(review.until - review.opened, 2),
            "proposal": _decision_json(review.proposal, review.proposal_check), "text": review.text,
            "suggestion": _decision_json(review.suggestion), "suggestion_text": review.suggestion_text,
            "message": review.message}


def _turn_json(t: TurnLog) -> dict[str, Any]:
    return {"turn": t.turn, "started": t.started, "decisions": t.decisions, "repairs": t.repairs, "plays": t.plays,
            "salvages": t.salvages, "reasks": t.reasks,
            "interventions": t.interventions, "tokens": {"prompt": t.prompt_tokens, "completion": t.completion_tokens},
            "llm_s": round(t.llm_seconds, 3), "outcome": t.outcome, "seconds": t.seconds}
