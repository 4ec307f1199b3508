"""The LLM player: prompts a vision model for each decision and turns its answer into a pose.

It never trusts the model's numbers: the answer is validated against the output schema, relations
are resolved by the geometry engine, and the session repairs whatever pose comes out. When the
model fails (error, garbage, nonsense), the player says so in one chat line, and, only if the
config asks for it, lets the offline planner play the turn instead.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from dataclasses import replace
from typing import Any

from agent.core.images import data_url
from agent.core.llm import LLMClient, LLMResult
from agent.core.llm_records import record_llm_result, record_llm_unfinished
from agent.core.prompts import PromptSet
from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.moves import CHAT_SCHEMA, Move, move_schema, parse_move
from agent.games.tangram.planner.candidates import NO_CANDIDATES, propose_candidates
from agent.games.tangram.players.base import Decision, Player, TurnView
from agent.games.tangram.players.marks import Marks, mark_board, mark_drawer, mark_images
from agent.games.tangram.players.resolve import move_to_pose
from agent.games.tangram.prompt_context import build_context, marks_context

log = logging.getLogger(__name__)


class LLMPlayer:
    name = "llm"
    uses_images = True

    def __init__(self, config: Config, client: LLMClient, prompts: PromptSet, transcript: Transcript,
                 planner: Player | None = None) -> None:
        self.config = config
        self.client = client
        self.prompts = prompts
        self.transcript = transcript
        self.planner = planner

    # ------------------------------------------------------------------ decisions

    async def play(self, view: TurnView) -> Decision:
        # The hint, the board description and the marked images do not depend on each other.
        hint, context, marks = await asyncio.gather(self._planner_hint(view), self._context(view),
                                                    self._marks(view, drawer=True))
        context["planner_hint"] = hint
        return await self._decide(view, "play", context, marks)

    async def adjust(self, view: TurnView) -> Decision:
        context, marks = await asyncio.gather(
            self._context(view, max_attempts=self.config.turn.max_feedback_iterations),
            self._marks(view, drawer=False))
        return await self._decide(view, "feedback", context, marks)

    async def chat(self, view: TurnView) -> str:
        context, marks = await asyncio.gather(self._context(view),
                                              self._marks_without_candidates(view, self.config.llm.chat_drawer_image))
        context.update(marks_context(NO_CANDIDATES, marks.board_layers, marks.drawer_layers),
                       has_board_image=marks.board is not None, has_drawer_image=marks.drawer is not None)
        messages, image_bytes = self._messages("chat", context, marks.images)
        # No deadline of its own: the session bounds a chat answer (a cancel is recorded).
        result = await self._call("chat", messages, CHAT_SCHEMA, "chat_reply", image_bytes, None, marks.images)
        assert result is not None
        reply = result.data.get("reply") if isinstance(result.data, dict) else None
        if isinstance(reply, str) and reply.strip():
            return reply
        if result.text and result.data is None and not result.error:
            return result.text  # a model that ignored the JSON request still said something useful
        if self.planner is not None and self.config.llm.fallback_to_planner:
            return await self.planner.chat(view)
        return "Sorry, I couldn't think of an answer just now."

    async def _decide(self, view: TurnView, template: str, context: dict[str, Any], marks: Marks) -> Decision:
        context.update(marks_context(marks.candidates, marks.board_layers, marks.drawer_layers),
                       has_board_image=marks.board is not None, has_drawer_image=marks.drawer is not None)
        messages, image_bytes = self._messages(template, context, marks.images)
        offered = marks.candidates.letters
        # Retries may add up to more than the turn has; stop in time for the fallback to play.
        result = await self._call(template, messages, move_schema(offered), "tangram_move", image_bytes,
                                  view.decide_by, marks.images)
        if result is None:
            return await self._failed(view, "the language model did not answer in time", marks)
        if result.error:
            return await self._failed(view, f"the language model failed ({result.error})", marks)
        move, problem = parse_move(result.data, offered)
        if move is None:
            return await self._failed(view, f"the language model's answer was unusable ({problem})", marks)
        chosen = marks.candidates.get(move.candidate)
        if chosen is not None:
            # Played exactly as offered, whatever else the answer says; the model's words are kept.
            default = f"I'm placing {chosen.piece} as the {chosen.part}."
            return _seen(Decision(chosen.pose, move.chat or default, move.reasoning, "llm", chosen.letter), marks)
        if move.action == "pass":
            return _seen(Decision(None, move.chat or "I'll pass this turn.", move.reasoning, "llm"), marks)
        pose = self._pose(move, view)
        if pose is None:
            what = (f"turn {move.piece} where it stands: it is not on the board" if move.action == "rotate"
                    else f"place {move.piece} {move.relation} {move.anchor}: {move.anchor} is not on the board")
            return await self._failed(view, f"I could not {what}", marks)
        return _seen(Decision(pose, move.chat or f"I'm placing {move.piece}.", move.reasoning, "llm"), marks)

    def _pose(self, move: Move, view: TurnView) -> Pose | None:
        return move_to_pose(move, view.state)

    async def _failed(self, view: TurnView, reason: str, marks: Marks | None = None) -> Decision:
        log.warning("LLM decision failed: %s", reason)
        if self.planner is not None and self.config.llm.fallback_to_planner:
            decision = await self.planner.play(view)
            return _seen(Decision(decision.pose, decision.chat, f"planner fallback: {reason}", "planner-fallback"),
                         marks)
        return _seen(Decision(None, "Sorry, I had trouble deciding on a move this turn; your go!", reason, "fallback"),
                     marks)

    async def _marks_without_candidates(self, view: TurnView, drawer: bool) -> Marks:
        return await asyncio.to_thread(mark_images, view, self.config.images, NO_CANDIDATES, drawer)

    async def _planner_hint(self, view: TurnView) -> str | None:
        if not (self.config.llm.planner_hint and self.planner is not None):
            return None
        suggest = getattr(self.planner, "suggest", None)
        if suggest is None:
            return None
        # suggest() plans on a copy: asking for a hint must not change the planner's own plan.
        _, hint = await asyncio.to_thread(suggest, view)
        return hint or None

    # ------------------------------------------------------------------ plumbing

    async def _context(self, view: TurnView, **extra: Any) -> dict[str, Any]:
        # The board description runs shapely searches (milliseconds): keep them off the event loop.
        return await asyncio.to_thread(build_context, view, history=self.config.chat_history, **extra)

    async def _marks(self, view: TurnView, *, drawer: bool) -> Marks:
        """Checked candidates, then the images with the configured marks: once per frame, in worker
        threads (shapely searches and Pillow drawing take milliseconds each)."""
        cfg, count = self.config.images, self.config.llm.candidates
        # The drawer picture needs no candidate: it is drawn while they are searched for.
        drawer_task = asyncio.ensure_future(asyncio.to_thread(mark_drawer, view, cfg)) if drawer else None
        try:
            candidates = NO_CANDIDATES
            if count:
                library = getattr(getattr(self.planner, "planner", None), "library", None)
                candidates = await asyncio.to_thread(propose_candidates, view.objective, view.board(), count,
                                                     library=library, default_figure=self.config.planner.default_figure)
            board_png, board_layers = await asyncio.to_thread(mark_board, view, cfg, candidates)
            drawer_png, drawer_layers = await drawer_task if drawer_task is not None else (None, ())
        finally:
            if drawer_task is not None and not drawer_task.done():
                drawer_task.cancel()
        return Marks(candidates, board_png, drawer_png, board_layers, drawer_layers)

    def _messages(self, template: str, context: dict[str, Any],
                  images: tuple[bytes, ...]) -> tuple[list[dict[str, Any]], int]:
        content: list[dict[str, Any]] = [{"type": "text", "text": self.prompts.render(template, context)}]
        detail = self.config.images.detail
        mime = "image/jpeg" if self.config.images.format == "jpeg" else "image/png"
        content.extend({"type": "image_url", "image_url": {"url": data_url(data, mime), "detail": detail}}
                       for data in images)
        return [{"role": "system", "content": self.prompts.render("system", context)},
                {"role": "user", "content": content}], sum(len(d) for d in images)

    async def _call(self, purpose: str, messages: list[dict[str, Any]], schema: dict[str, Any], schema_name: str,
                    image_bytes: int, deadline: float | None, images: tuple[bytes, ...] = ()) -> LLMResult | None:
        """One LLM call, recorded however it ends; None when ``deadline`` (loop time) passed first.

        A call cancelled from outside (the turn's deadline, a disconnect, a shutdown) leaves an
        ``llm`` record with outcome ``cancelled`` before the cancellation goes on.
        """
        started = time.monotonic()
        shown = _image_refs(self.transcript, images)
        try:
            async with asyncio.timeout_at(deadline):
                # Chat answers wait behind turns for a slot of the process-wide LLM gate.
                result = await self.client.complete_json(messages, schema, schema_name,
                                                         priority="chat" if purpose == "chat" else "play")
        except TimeoutError:
            record_llm_unfinished(self.transcript, purpose, messages, started, "timeout", self.config.llm.model,
                                  image_bytes=image_bytes, images=shown)
            return None
        except asyncio.CancelledError:
            record_llm_unfinished(self.transcript, purpose, messages, started, "cancelled", self.config.llm.model,
                                  image_bytes=image_bytes, images=shown)
            raise
        record_llm_result(self.transcript, purpose, messages, started, result, image_bytes=image_bytes, images=shown)
        return result


def _image_refs(transcript: Transcript, images: tuple[bytes, ...]) -> list[dict[str, Any]]:
    """Each picture sent, as the llm record names it: a hash, its size, and the file it was kept in
    (``transcripts.images``; the simulator's report shows those files)."""
    refs = []
    for data in images:
        suffix = "jpg" if data.startswith(b"\xff\xd8") else "png"
        refs.append({"sha256": hashlib.sha256(data).hexdigest()[:16], "bytes": len(data),
                     "file": transcript.keep_file(data, suffix)})
    return refs


def _seen(decision: Decision, marks: Marks | None) -> Decision:
    """The decision with what the model was shown for it (layers drawn, the images themselves)."""
    if marks is None:
        return decision
    return replace(decision, image_layers=marks.board_layers, images=marks.images)
