"""The LLM player: prompts a vision model for each decision and turns its answer into a pose.

It never trusts the model's numbers: the answer is validated against the output schema, relations
are resolved by the geometry engine, and the session repairs whatever pose comes out. An imperfect
answer is salvaged (:mod:`agent.games.tangram.llm_player.salvage`: each change recorded); one nothing can be
made of is corrected once in the same conversation (``prompts/tangram/reask.j2``, the `instructor`
convention) when the turn's time allows. Only then, when the model still fails, the player says so
in one chat line, and, only if the config asks for it, lets the offline planner play the turn.

A player given a :class:`~agent.core.llm.spend_guard.SpendGuard` (an online study's spend caps)
asks it before each LLM call; once it refuses, the model is not asked again in this session: the
offline planner plays and answers the rest of it (one ``spend_cap`` record, one warning), and the
partner hears only the planner's own lines.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import Any

from agent.core.images import data_url
from agent.core.llm import Compact, LLMClient, LLMResult
from agent.core.llm.records import record_llm_result, record_llm_unfinished
from agent.core.llm.spend_guard import SpendGuard
from agent.core.prompts import PromptSet
from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Decision, Player, TurnView
from agent.games.tangram.dialogue import LANGUAGES, line_language, partner_line
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.llm_player.context import board_text, build_context, marks_context, problem_context
from agent.games.tangram.llm_player.replies import contradicts_move, degenerate, false_claim, silent_on_move
from agent.games.tangram.llm_player.resolve import move_to_pose
from agent.games.tangram.llm_player.salvage import Problem, salvage_answer
from agent.games.tangram.llm_player.schema import CHAT_SCHEMA, Move, move_schema
from agent.games.tangram.llm_player.stand_in import StandIn
from agent.games.tangram.offline.player import PlannerPlayer
from agent.games.tangram.pictures.marks import Marks, mark_board, mark_drawer, mark_images
from agent.games.tangram.planner.candidates import LETTERS, NO_CANDIDATES, CandidateSet, propose_candidates
from agent.games.tangram.protocol import GameState

log = logging.getLogger(__name__)

LATENCY_SAMPLES = 8
REASK_MARGIN = 1.25
"""A re-ask goes out only if the slowest recent call, this much longer, still ends before decide_by."""


@dataclass(frozen=True, slots=True)
class _Unusable:
    reason: str
    """For the log and the decision's reasoning."""
    problem: Problem | None = None
    """What a re-ask can tell the model; None when asking again cannot help (no answer, an error)."""


class LLMPlayer(Player):
    name = "llm"

    @property
    def uses_images(self) -> bool:  # type: ignore[override]
        """Pictures are made for the model only while its endpoint may see them: a text model (the
        probes found it does not, e.g. Gemma 3 270M on llama.cpp) is spared the pictures, their marks
        and the prompt's words about them, and the CPU beside the game is spared making them (issue 69)."""
        return self.client.dialect.sends_images

    def __init__(self, config: Config, client: LLMClient, prompts: PromptSet, transcript: Transcript,
                 planner: PlannerPlayer | None = None, spend: SpendGuard | None = None) -> None:
        self.config = config
        self.client = client
        self.prompts = prompts
        self.transcript = transcript
        self.stand_in = StandIn(config, planner)
        """The one offline stand-in (stand_in.py): a fallback move, the hint, an answer the model's reply
        could not give, every turn past a spend cap."""
        self.spend = spend
        """Asked before each LLM call when the session's spend is capped (an online study)."""
        self._spend_cap: str | None = None
        """Why a spend cap switched this session to the offline planner; from then on the model is not asked."""
        self.marks_board = "grid" in config.images.annotate
        """The grid goes on every board picture: the session leaves its encoding to the marks."""
        self._latencies: deque[float] = deque(maxlen=LATENCY_SAMPLES)
        """This session's recent LLM call times (seconds), to judge whether a re-ask fits the turn."""
        self._described: tuple[GameState, asyncio.Future[str]] | None = None
        """The latest board description made, and the state it describes."""
        self._unsubscribe = client.outage.subscribe(self._llm_server_changed)
        """The LLM server stopping or answering again goes into this session's transcript."""

    # ------------------------------------------------------------------ decisions

    async def play(self, view: TurnView) -> Decision:
        if self._over_cap() is not None:
            return replace(await self.stand_in.player.play(view), source="planner-spend-cap")
        answerer = self.stand_in.keeps_promise()
        if answerer is not None:
            # The offline planner answered a chat for the model and promised this turn's move: it keeps it.
            decision = await answerer.play(view)
            self.transcript.record("promise_kept", by="planner", chat=decision.chat)
            return replace(decision, source="planner-promise")
        view, context, marks = await self._prepare(view, drawer=True, hint=True)
        return await self._decide(view, "play", context, marks)

    async def adjust(self, view: TurnView) -> Decision:
        if self._over_cap() is not None:
            return replace(await self.stand_in.player.adjust(view), source="planner-spend-cap")
        view, context, marks = await self._prepare(view, drawer=False,
                                                   max_attempts=self.config.turn.max_feedback_iterations)
        return await self._decide(view, "feedback", context, marks)

    async def _prepare(self, view: TurnView, *, drawer: bool, hint: bool = False,
                       max_attempts: int = 0) -> tuple[TurnView, dict[str, Any], Marks]:
        """The view with its images, the prompt's context and the marked images.

        Two worker threads at most, beside the session's image threads: the board description
        (shared with a chat about the same board) and then the candidates and the planner's hint
        (when the config asks for them) are Python-heavy and hold the interpreter lock, while Pillow
        prepares the images (it works outside the lock); then one thread draws both pictures'
        marks, when there are marks to draw. Measured on the shared 2-core machine, four threads
        side by side took half as long again as these two."""
        ready, description, (candidates, planner_hint) = await asyncio.gather(
            view.with_images(), self._description(view), self._offers(view, hint))
        marks = (await asyncio.to_thread(self._mark, ready, candidates, drawer) if self.config.images.annotate
                 else self._mark(ready, candidates, drawer))  # nothing to draw: the prepared pictures as they are
        said, fixed = self._constraints(view)
        context = build_context(ready, history=self.config.chat_history, max_attempts=max_attempts,
                                planner_hint=planner_hint, board_description=description, constraints=said,
                                fixed=fixed)
        return ready, context, marks

    def _constraints(self, view: TurnView) -> tuple[list[str], frozenset[str]]:
        """What the partner asked never to be done, agreed to by the planner that answered a chat in
        the model's place ("don't move my pieces"), and the pieces on the board it keeps where they are:
        the model's later turns are held to it too (the prompt says it, the validator refuses a move
        that breaks it)."""
        answerer = self.stand_in.existing
        return answerer.constraints(view) if answerer is not None else ([], frozenset())

    async def _description(self, view: TurnView) -> str:
        """The board description of ``view``'s state (shapely searches, milliseconds, in a worker
        thread), made once per state: a chat during the turn, whose frame carries the state the
        playRequest carried, shares the turn's (finished or under way) instead of making its own."""
        made = self._described
        if made is None or made[0] != view.state or made[1].cancelled():
            made = (view.state, asyncio.ensure_future(asyncio.to_thread(board_text, view)))
            # Its failure is its callers' to report; one left with no caller is not "never retrieved".
            made[1].add_done_callback(lambda task: task.cancelled() or task.exception())
            self._described = made
        # Shielded: a caller cancelled (a chat given up) leaves the other's description running.
        return await asyncio.shield(made[1])

    async def _offers(self, view: TurnView, hint: bool) -> tuple[CandidateSet, str | None]:
        """The checked candidates and the planner's hint (a worker thread), or none of either."""
        if not self.config.llm.candidates and not (hint and self.config.llm.planner_hint):
            return NO_CANDIDATES, None
        return await asyncio.to_thread(self._plan, view, hint)

    def _plan(self, view: TurnView, hint: bool) -> tuple[CandidateSet, str | None]:
        """In a worker thread: the checked candidates, the planner's hint."""
        return self._candidates(view), self._planner_hint(view) if hint else None

    def _mark(self, view: TurnView, candidates: CandidateSet, drawer: bool) -> Marks:
        """The images with the configured marks, once per frame (a worker thread when there are marks)."""
        cfg = self.config.images
        board_png, board_layers = mark_board(view, cfg, candidates)
        drawer_png, drawer_layers = mark_drawer(view, cfg) if drawer else (None, ())
        return Marks(candidates, board_png, drawer_png, board_layers, drawer_layers)

    async def aclose(self) -> None:
        self._unsubscribe()

    def _llm_server_changed(self, state: str, line: str) -> None:
        self.transcript.record("llm_server", state=state, line=line)

    async def chat(self, view: TurnView) -> str:
        if self._over_cap() is not None:
            return await self.stand_in.player.chat(view)
        wait = self.config.llm.chat_wait
        if not self.client.answers_within(wait):
            # A model that cannot answer in time costs the partner neither the answer nor the wait.
            why = self.client.outage.reason or f"the model cannot be expected to answer within {wait:.0f} s"
            return await self._answer_instead(view, None, why)
        context, marks = await asyncio.gather(self._context(view),
                                              self._marks_without_candidates(view, self.config.llm.chat_drawer_image))
        context.update(marks_context(NO_CANDIDATES, marks.board_layers, marks.drawer_layers),
                       has_board_image=marks.board is not None, has_drawer_image=marks.drawer is not None)
        messages, image_bytes = self._messages("chat", context, marks.images)
        # Bounded by llm.chat_wait: past it the planner answers (the unfinished call is recorded).
        result = await self._call("chat", messages, CHAT_SCHEMA, "chat_reply", image_bytes,
                                  asyncio.get_running_loop().time() + wait, marks.images,
                                  compact=self._compact("chat", context, marks.images))
        if result is None:
            return await self._answer_instead(view, None, f"the model gave no reply within {wait:.0f} s")
        reply = result.data.get("reply") if isinstance(result.data, dict) else None
        if not isinstance(reply, str) and result.text and result.data is None and not result.error:
            reply = result.text  # a model that ignored the JSON request may still have said something useful
        if not isinstance(reply, str):
            why = f"no reply ({result.error})" if result.error else "no reply"
        else:
            partner = [e.text for e in view.memory.recent() if e.speaker == "player"] or [view.message]
            if partner[-1] != view.message:
                partner.append(view.message)
            prompt = [_text_of(m) for m in messages]
            reason = await asyncio.to_thread(degenerate, reply, partner=partner, prompt=prompt)
            if reason is None:
                reason = false_claim(reply, view.movers)
            if reason is None:
                planner = self.stand_in.keeps_promise()
                if planner is not None:
                    planner.heard(view)  # "your turn" after the planner agreed to "leave the rest to me"
                return reply
            why = reason
        return await self._answer_instead(view, reply, why)

    async def _answer_instead(self, view: TurnView, said: str | None, why: str) -> str:
        """The model's reply cannot be shown: answer from what the player knows (the offline
        planner's reading of the line and the board), and record the swap."""
        try:
            reply = await self.stand_in.player.chat(view)
        except Exception:  # the honest line below still goes out
            log.exception("the offline chat answer failed")
            reply = partner_line("failed", await asyncio.to_thread(line_language, view.message))
        self.transcript.record("chat_replaced", reason=why, model_reply=None if said is None else said[:300],
                               reply=reply, by="planner")
        self.stand_in.spoke = True
        log.info("model chat reply not shown (%s); answered from the planner", why)
        return reply

    def _over_cap(self) -> str | None:
        """Why a spend cap keeps the model from being asked (for the rest of the session), or None.
        Checked before every call: the first refusal is recorded and logged, once."""
        if self._spend_cap is None and self.spend is not None:
            reason = self.spend.refusal()
            if reason is not None:
                self._spend_cap = reason
                self.transcript.record("spend_cap", reason=reason, player="planner")
                log.warning("%s: the offline planner plays the rest of this session instead of %s", reason,
                            self.config.llm.model)
        return self._spend_cap

    async def _decide(self, view: TurnView, template: str, context: dict[str, Any], marks: Marks) -> Decision:
        """Ask; play a named candidate exactly, else salvage what the answer allows; re-ask once with
        the facts if nothing can be played and time allows; only then fall back (the planner, or an
        honest pass)."""
        context.update(marks_context(marks.candidates, marks.board_layers, marks.drawer_layers),
                       has_board_image=marks.board is not None, has_drawer_image=marks.drawer is not None)
        messages, image_bytes = self._messages(template, context, marks.images)
        schema = move_schema(self._schema_letters(marks.candidates))
        # Retries may add up to more than the turn has; stop in time for the fallback to play.
        result = await self._call(template, messages, schema, "tangram_move", image_bytes, view.decide_by,
                                  marks.images, compact=self._compact(template, context, marks.images))
        if result is not None and result.compact_messages is not None:
            messages = result.compact_messages  # a re-ask continues the conversation that was sent
        lang = await last_partner_language(view)
        outcome = self._interpret(result, view, template, marks, reasked=False, lang=lang)
        reasks = 0
        # An answer cut off twice (the client already asked again with tighter bounds) is not asked a third time.
        cut_twice = result is not None and result.reasked and result.data is None
        while isinstance(outcome, _Unusable) and outcome.problem is not None \
                and reasks < self.config.llm.max_reasks and not cut_twice:
            assert result is not None
            left = self._time_left(view)
            expected = self._expected_latency()
            sent = left is not None and left >= expected
            self.transcript.record("reask", purpose=template, problem=outcome.problem.kind,
                                   detail=outcome.problem.detail, sent=sent, expected_s=round(expected, 3),
                                   left_s=None if left is None else round(left, 3))
            if not sent:
                break
            reasks += 1
            messages = [*messages, {"role": "assistant", "content": result.text},
                        {"role": "user", "content": self.prompts.render("reask", {
                            **context, "problem": problem_context(outcome.problem)})}]
            result = await self._call("reask", messages, schema, "tangram_move", image_bytes, view.decide_by,
                                      marks.images, reask_of=template)
            outcome = self._interpret(result, view, template, marks, reasked=True, lang=lang)
        if isinstance(outcome, _Unusable):
            return await self._failed(view, outcome.reason, marks, lang)
        return outcome

    def _interpret(self, result: LLMResult | None, view: TurnView, purpose: str, marks: Marks,
                   reasked: bool, lang: str = LANGUAGES[0]) -> Decision | _Unusable:
        """The decision an answer supports (salvaged, each change recorded), or why it supports none.
        ``lang``: the partner's language, for the lines said when the model gave none."""
        if result is None:
            return _Unusable("the language model did not answer in time")
        if result.error and not (result.text and result.data is None):
            # A provider failure (already retried by the client): asking again would not help.
            return _Unusable(f"the language model failed ({result.error})")
        source = "llm+reask" if reasked else "llm"
        data = result.data
        positions = {name: p.position for name, p in view.state.on_board.items()}
        said, fixed = self._constraints(view)
        kept = dict.fromkeys(fixed, "; ".join(said))
        salvaged = salvage_answer(data, positions, marks.candidates.letters, kept=kept,
                                  offered_pieces={c.letter: c.piece for c in marks.candidates.candidates})
        chosen = marks.candidates.get(salvaged.candidate)
        if chosen is not None and salvaged.move is not None:
            # Played exactly as offered, whatever else the answer says; the model's words are kept.
            default = partner_line("placing_as", lang, piece=chosen.piece, part=chosen.part)
            line = self._move_line(salvaged.move.chat, chosen.piece, default, purpose, view.objective)
            return _seen(Decision(chosen.pose, line, salvaged.move.reasoning, source, chosen.letter), marks)
        move = salvaged.move
        if move is None:
            assert salvaged.problem is not None
            detail = result.error or salvaged.problem.detail
            return _Unusable(f"the language model's answer was unusable ({detail})", salvaged.problem)
        if move.action == "pass":
            return _seen(Decision(None, move.chat or partner_line("pass", lang), move.reasoning, source), marks)
        pose = self._pose(move, view)
        if pose is None:  # salvage leaves only anchors on the board; kept as a guard
            return _Unusable(f"I could not place {move.piece} as asked",
                             Problem("no_position", f"no pose for {move.piece}", move.piece))
        notes = salvaged.salvages
        for note in notes:
            self.transcript.record("salvage", purpose=purpose, salvage=note.kind, said=note.said,
                                   played=note.played, why=note.why)
        if notes:
            source += "+salvage"
        line = self._move_line(move.chat or "", pose.piece, partner_line("placing", lang, piece=pose.piece), purpose,
                               view.objective)
        return _seen(Decision(pose, line, move.reasoning, source), marks)

    def _schema_letters(self, candidates: CandidateSet) -> list[str]:
        """The candidate letters the schema allows: every letter the config can offer, not only this
        turn's, so the schema (told in the system message to a server without strict schemas) is
        byte-identical from call to call and a server's prompt cache keeps it (issue 69). The prompt
        lists the letters really offered; a letter not offered is dropped by the salvage."""
        count = self.config.llm.candidates
        if not count:
            return list(candidates.letters)
        return sorted({*LETTERS[:count], *candidates.letters})

    def _move_line(self, chat: str, piece: str, default: str, purpose: str, objective: str) -> str:
        """The model's line for its move, or ``default`` (recorded) when it is empty, degenerate (the
        objective copied back, "A human", says nothing of the move: seen on the real game), or names
        other pieces than the one played."""
        if not chat.strip():
            return default
        why = degenerate(chat, prompt=(objective,), language=False)
        if why is None and contradicts_move(chat, piece):
            why = f"it names other pieces than the one played ({piece})"
        if why is None and silent_on_move(chat, piece):
            why = f"it does not say which piece was played ({piece})"
        if why is None:
            return chat
        self.transcript.record("chat_replaced", purpose=purpose, reason=why, model_reply=chat[:300], reply=default,
                               by="default")
        return default

    def _pose(self, move: Move, view: TurnView) -> Pose | None:
        return move_to_pose(move, view.state)

    async def _failed(self, view: TurnView, reason: str, marks: Marks | None = None,
                      lang: str = LANGUAGES[0]) -> Decision:
        if self._spend_cap is not None:  # crossed by this turn's first call: the planner plays it
            return replace(await self.stand_in.player.play(view), source="planner-spend-cap")
        log.warning("LLM decision failed: %s", reason)
        if self.stand_in.configured and self.config.llm.fallback_to_planner:
            decision = await self.stand_in.player.play(view)
            return _seen(Decision(decision.pose, decision.chat, f"planner fallback: {reason}", "planner-fallback"),
                         marks)
        return _seen(Decision(None, partner_line("move_failed", lang), reason, "fallback"), marks)

    def _time_left(self, view: TurnView) -> float | None:
        """Seconds until the view's decide_by (None: no deadline, e.g. a chat: no re-ask then)."""
        if view.decide_by is None:
            return None
        return view.decide_by - asyncio.get_running_loop().time()

    def _expected_latency(self) -> float:
        """How long another call will likely take: the slowest of this session's recent calls, with
        a margin. A re-ask that would not be back by the turn's decide_by is not sent: the turn's
        reserve for a fallback and the game's animation stays untouched either way."""
        if not self._latencies:
            return math.inf
        return REASK_MARGIN * max(self._latencies)

    async def _marks_without_candidates(self, view: TurnView, drawer: bool) -> Marks:
        if not self.config.images.annotate:
            return mark_images(view, self.config.images, NO_CANDIDATES, drawer)  # nothing to draw
        return await asyncio.to_thread(mark_images, view, self.config.images, NO_CANDIDATES, drawer)

    def _planner_hint(self, view: TurnView) -> str | None:
        """The offline planner's suggestion for the prompt (in a worker thread), or None."""
        if not (self.config.llm.planner_hint and self.stand_in.configured):
            return None
        # suggest() plans on a copy: asking for a hint must not change the planner's own plan.
        _, hint = self.stand_in.player.suggest(view)
        return hint or None

    # ------------------------------------------------------------------ plumbing

    async def _context(self, view: TurnView, **extra: Any) -> dict[str, Any]:
        # The board description runs shapely searches (milliseconds): off the event loop, and shared.
        return build_context(view, history=self.config.chat_history, board_description=await self._description(view),
                             **extra)

    def _candidates(self, view: TurnView) -> CandidateSet:
        """This decision's checked candidates (a planner search, in a worker thread), or none."""
        count = self.config.llm.candidates
        if not count:
            return NO_CANDIDATES
        library = self.stand_in.library
        try:
            return propose_candidates(view.objective, view.board(), count, library=library,
                                      default_figure=self.config.planner.default_figure)
        except Exception:  # the model can still make its own move: no offer this time
            log.exception("candidate search failed; no candidates this turn")
            return NO_CANDIDATES

    def _messages(self, template: str, context: dict[str, Any],
                  images: tuple[bytes, ...]) -> tuple[list[dict[str, Any]], int]:
        content: list[dict[str, Any]] = [{"type": "text", "text": self.prompts.render(template, context)}]
        detail = self.config.images.detail
        mime = "image/jpeg" if self.config.images.format == "jpeg" else "image/png"
        content.extend({"type": "image_url", "image_url": {"url": data_url(data, mime), "detail": detail}}
                       for data in images)
        return [{"role": "system", "content": self.prompts.render("system", context)},
                {"role": "user", "content": content}], sum(len(d) for d in images)

    def _compact(self, template: str, context: dict[str, Any], images: tuple[bytes, ...]) -> Compact:
        """The prompt's compact form (shorter rules, candidates first, two lines of history), made
        only when the client finds the full one too long for the model's context window."""
        return lambda: self._messages(template, {**context, "compact": True}, images)[0]

    async def _call(self, purpose: str, messages: list[dict[str, Any]], schema: dict[str, Any], schema_name: str,
                    image_bytes: int, deadline: float | None, images: tuple[bytes, ...] = (),
                    compact: Compact | None = None, **extra: Any) -> LLMResult | None:
        """One LLM call, recorded however it ends; None when ``deadline`` (loop time) passed first.

        A call cancelled from outside (the turn's deadline, a disconnect, a shutdown) leaves an
        ``llm`` record with outcome ``cancelled`` before the cancellation goes on.
        """
        capped = self._over_cap()
        if capped is not None:  # the spend_cap record says so; nothing was sent
            return LLMResult(model=self.config.llm.model, skipped=True, error=f"not asked: {capped}")
        started = time.monotonic()
        shown = _image_refs(self.transcript, images)
        try:
            async with asyncio.timeout_at(deadline):
                # Chat answers wait behind turns for a slot of the process-wide LLM gate.
                result = await self.client.complete_json(messages, schema, schema_name,
                                                         priority="chat" if purpose == "chat" else "play",
                                                         deadline=deadline, compact=compact)
        except TimeoutError:
            record_llm_unfinished(self.transcript, purpose, messages, started, "timeout", self.config.llm.model,
                                  image_bytes=image_bytes, images=shown, **extra)
            self._latencies.append(time.monotonic() - started)  # at least this long: a lower bound
            return None
        except asyncio.CancelledError:
            record_llm_unfinished(self.transcript, purpose, messages, started, "cancelled", self.config.llm.model,
                                  image_bytes=image_bytes, images=shown, **extra)
            raise
        record_llm_result(self.transcript, purpose, messages, started, result, image_bytes=image_bytes,
                          images=shown, **extra)
        self._latencies.append(time.monotonic() - started)
        return result


def _text_of(message: dict[str, Any]) -> str:
    """A prompt message's text parts joined (images left out)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _seen(decision: Decision, marks: Marks | None) -> Decision:
    """The decision with what the model was shown for it (layers drawn, the images themselves)."""
    if marks is None:
        return decision
    return replace(decision, image_layers=marks.board_layers, images=marks.images)


def _image_refs(transcript: Transcript, images: tuple[bytes, ...]) -> list[dict[str, Any]]:
    """Each picture sent, as the llm record names it: a hash, its size, and the file it was kept in
    (``transcripts.images``; the simulator's report shows those files)."""
    refs = []
    for data in images:
        suffix = "jpg" if data.startswith(b"\xff\xd8") else "png"
        refs.append({"sha256": hashlib.sha256(data).hexdigest()[:16], "bytes": len(data),
                     "file": transcript.keep_file(data, suffix)})
    return refs


async def last_partner_language(view: TurnView) -> str:
    """The language of the partner's last chat line (the game's own before any): the lines the
    player says when the model gave none are said in it (read in a thread: the first reading loads
    the dictionaries)."""
    said = [e.text for e in view.memory.recent() if e.speaker == "player"]
    if not said:
        return LANGUAGES[0]
    return await asyncio.to_thread(line_language, said[-1])
