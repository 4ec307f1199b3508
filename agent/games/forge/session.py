"""One game's state on the agent's side: its memory of earlier decisions, its transcript, and the
answers to requests Forge may send twice.

The later client re-sends the same request after an I/O error (our answer was lost), and a copy
can arrive while the first is still being decided: both get the answer decided for it, without a
second LLM call. But Forge also asks the very same question again when the chosen action could
not be done (it could not be paid, say); answering it the same way for ever would loop. So one
repeat gets the same answer, and a second repeat is decided afresh, with that action ruled out.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from typing import Any

from agent.core.memory import Memory
from agent.core.transcript import Transcript, record_scope
from agent.games.forge.decisions import encode, safe_decision
from agent.games.forge.heuristic import action_key
from agent.games.forge.models import ActionState, ForgeRequest
from agent.games.forge.player import Decider, Outcome
from agent.games.forge.prompt_context import describe
from agent.games.forge.view import build_view

log = logging.getLogger(__name__)

MAX_TRIED = 256
"""Actions remembered as already taken this turn; bounded so a long turn cannot grow memory."""


class GameSession:
    def __init__(self, game_id: str, transcript: Transcript, memory_size: int) -> None:
        self.game_id = game_id
        self.transcript = transcript
        self.memory = Memory(max_entries=max(1, memory_size))
        self.tried: set[str] = set()
        self._turn: int | None = None
        self.last_seen = time.monotonic()
        self.decisions = 0
        self._turn_ids = 0
        """Each decision's turn id in the transcript (every record of the decision carries it)."""
        self._last: tuple[str, dict[str, Any]] | None = None
        self._repeats = 0
        self._inflight: dict[str, asyncio.Task[dict[str, Any]]] = {}

    async def answer(self, request: ForgeRequest, raw: bytes, decider: Decider) -> dict[str, Any]:
        self.last_seen = time.monotonic()
        fingerprint = hashlib.sha256(raw).hexdigest()
        if self._last is not None and self._last[0] == fingerprint:
            self._repeats += 1
            if self._repeats == 1:
                self.transcript.record("repeat", request_type=request.request_type,
                                       note="same request again; same answer")
                return self._last[1]
            self.transcript.record("repeat", request_type=request.request_type,
                                   note="asked again after the same answer; deciding afresh")
        else:
            self._repeats = 0
        running = self._inflight.get(fingerprint)
        if running is None:
            running = asyncio.create_task(self._decide(request, decider), name=f"forge-{self.game_id}")
            self._inflight[fingerprint] = running
            running.add_done_callback(lambda _t: self._inflight.pop(fingerprint, None))
        # shield: a client that hangs up must not cancel a decision its retry will ask for again.
        response = await asyncio.shield(running)
        self._last = (fingerprint, response)
        return response

    async def _decide(self, request: ForgeRequest, decider: Decider) -> dict[str, Any]:
        # Taken before anything awaits: two requests decided at once get different ids.
        self._turn_ids += 1
        with record_scope(turn=self._turn_ids):
            return await self._decide_in_scope(request, decider, self._turn_ids)

    async def _decide_in_scope(self, request: ForgeRequest, decider: Decider, turn_id: int) -> dict[str, Any]:
        started = time.monotonic()
        self.transcript.record("turn_start", turn=turn_id, game_id=self.game_id, request_type=request.request_type,
                               request=request.model_dump(mode="json", exclude_none=True))
        if request.warnings:
            log.warning("game %s: parts of the %s request could not be read and were left out: %s", self.game_id,
                        request.request_type, "; ".join(request.warnings[:3]))
        view = None
        try:
            view = build_view(request)
            if view.turn != self._turn:
                self._turn = view.turn
                self.tried.clear()
            memory = [f"{e.text}" for e in self.memory.recent()]
            # decide() ends in Decider.settle: the validator and the guard see every answer sent.
            outcome = await decider.decide(request, view, memory, self.tried, self.transcript)
        except Exception:
            log.exception("game %s: deciding a %s request failed; sending the safe default", self.game_id,
                          request.request_type)
            outcome = Outcome(safe_decision(request), "safe default after an internal error", "safe")
            if view is not None:  # the safe default meets the guard too (a pass holding lethal is not safe)
                try:
                    outcome = decider.settle(request, view, self.tried, outcome, self.transcript)
                except Exception:
                    log.exception("game %s: the guard failed on the safe default", self.game_id)
        response = encode(request, outcome.decision)
        what = describe(request, outcome.decision)
        if isinstance(request.options, ActionState) and view is not None:
            index = getattr(outcome.decision, "index", None)
            chosen = next((o for o in request.options.options if o.index == index), None)
            if chosen is not None and not chosen.is_pass and len(self.tried) < MAX_TRIED:
                self.tried.add(action_key(view, chosen))
        turn = view.turn if view is not None else "?"
        phase = view.phase if view is not None else "?"
        self.memory.add("agent", f"turn {turn} {phase}: {what} ({outcome.reason})")
        self.decisions += 1
        latency = time.monotonic() - started
        if outcome.note:
            log.info("game %s: %s", self.game_id, outcome.note)
        self.transcript.record("decision", game_id=self.game_id, request_type=request.request_type,
                               source=outcome.source, response=response, summary=what, reason=outcome.reason,
                               note=outcome.note, latency_ms=round(latency * 1000, 2), llm_outcome=outcome.llm_outcome)
        # outcome: who decided (llm, heuristic, heuristic-after-llm, ...); game_turn: Forge's turn number.
        self.transcript.record("turn_end", turn=turn_id, outcome=outcome.source, seconds=round(latency, 3),
                               request_type=request.request_type,
                               game_turn=view.turn if view is not None else None)
        return response

    async def close(self, reason: str, result: Any = None) -> None:
        """Flush and close; decisions still running finish first (the deadline bounds them), so a
        request that is waiting for one still gets its answer."""
        running = list(self._inflight.values())
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        self.transcript.record("session_end", reason=reason, game_id=self.game_id, decisions=self.decisions,
                               result=result)
        await self.transcript.close()
