"""The AI's turn in the real game: the human ends theirs, and the agent's turn is seen through."""

from __future__ import annotations

from benchmarks.tangram.real_game.browser import Recorder
from benchmarks.tangram.real_game.human import Human
from benchmarks.tangram.real_game.plan import TurnPlan


async def play_ai_turn(human: Human, rec: Recorder, step: TurnPlan, turn_timeout: float) -> str:
    """End the human's turn and see the AI's turn through; how it ended."""
    if step.chat_during:  # typed now, sent as the AI's turn starts (typing takes the slow game many seconds)
        await human.type_chat(step.chat_during)
    since = rec.cursor  # the agent may answer before End Turn's own wait is over
    request = await human.end_turn(then_send=step.chat_during)
    ws = request.ws
    if step.reload:
        first = await rec.until(lambda e: e.src == "agent" and e.ws == ws and e.type in ("play", "finish", "error"),
                                since, turn_timeout, "the AI's first play before the reload")
        if first.type == "play":
            rec.note("human", "reload")
            opened = rec.cursor
            await human.page.reload(timeout=human.step_s * 1000)
            await human.wait_socket(opened)
            return "reload"
    end = await rec.until(lambda e: e.src == "agent" and e.ws == ws and e.type in ("finish", "error"), since,
                          turn_timeout, f"the AI's turn {step.turn} to end")
    return end.type
