"""``--chat set``: each line of a reply set typed into the real game in its own situation, and the
judging sheet written (``OUT/sheet.jsonl``; chat_set.py reads the set, sheet.py makes the rows,
replies.py finds each reply).

Per item, on one browser and one agent process: a fresh page whose drawn objective is the item's
(reloaded until it is, at most ``chat_set.MAX_LOADS`` loads: drawn.py tells the objective; after that
the objective drawn is played and the row says so); the item's stage reached by the scripted human
(a drawer piece, the item's partner pieces first, then End Turn and the AI's turn, per round); each
``before`` line typed at the human's turn and its reply awaited; then the line, at the human's turn,
or (``moving``) typed beforehand and sent right after End Turn, once the human has moved a piece (End
Turn needs one), so that it arrives while the AI's turn is under way. The reply awaited is the agent's
answer to that line (replies.py), within ``--step-timeout``. A step that fails ends the item with
``reply: null`` and a ``failure``; the run goes on with the next item. Screenshots: ``shots/ID-line.png``
(the board as the line is sent) and ``shots/ID-reply.png`` (the reply shown).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any

from agent.games.tangram.planner import load_library
from agent.games.tangram.planner.library import FigureLibrary
from benchmarks.tangram.real_game.agent_run import AGENT_LEFT, AgentProcess, RunnerError
from benchmarks.tangram.real_game.ai_turn import play_ai_turn
from benchmarks.tangram.real_game.browser import Recorder, StepTimeout, frames
from benchmarks.tangram.real_game.chat_set import MAX_LOADS, SetItem, file_name, human_order, rounds_before
from benchmarks.tangram.real_game.drawn import SeenObjectives, ask_game, label_picture, settled_label
from benchmarks.tangram.real_game.events import Event
from benchmarks.tangram.real_game.human import Human, latest_state
from benchmarks.tangram.real_game.options import Options
from benchmarks.tangram.real_game.plan import TurnPlan
from benchmarks.tangram.real_game.promises import language
from benchmarks.tangram.real_game.replies import (
    Heard,
    Key,
    chat_request,
    find_reply,
    last_said,
    page_ms,
    transcript_records,
)
from benchmarks.tangram.real_game.sheet import (
    ItemRun,
    board_lines,
    movers_at,
    set_lines,
    set_summary,
    sheet_row,
    under_way,
)

POLL_S = 0.25
"""How often the agent's transcripts are read again while a reply is awaited (they are written a
moment after the frame goes out); the wait itself is bounded by --step-timeout."""


class SetPlayer:
    def __init__(self, context: Any, url: str, rec: Recorder, agent: AgentProcess, options: Options,
                 library: FigureLibrary) -> None:
        self.context = context
        self.url = url
        self.rec = rec
        self.agent = agent
        self.options = options
        self.library = library
        self.seen = SeenObjectives()
        self.taken: set[Key] = set()
        """Chat requests already matched to a line."""
        self.transcripts = options.out / "transcripts"
        self.shots = options.out / "shots"

    @property
    def events(self) -> list[Event]:
        return self.rec.log.events

    async def play(self, items: list[SetItem], sheet: Path) -> list[ItemRun]:
        runs = []
        with sheet.open("w", encoding="utf-8") as out:
            for item in items:
                run = await self.item(item)
                runs.append(run)
                out.write(json.dumps(run.row, ensure_ascii=False) + "\n")
                out.flush()
        return runs

    async def item(self, item: SetItem) -> ItemRun:
        run = ItemRun(item)
        started = time.monotonic()
        page = await self.context.new_page()
        self.rec.on_page(page)
        human = Human(page, self.rec, self.shots, self.options.step_timeout)
        ws = 0
        self.rec.note("runner", "item", id=item.id)
        try:
            await self._load(human, item, run)
            ws = self.rec.sockets
            await self._stage(human, item, ws, run)
            for line in item.before:
                await human.type_chat(line)
                event = await human.send_chat(line)
                await self._reply(line, self._index(event), ws)
            run.row = await self._line(human, item, ws)
        except Exception as exc:  # a step timed out (ours, or Playwright's): the item fails, the run goes on
            failure = str(exc) if isinstance(exc, RunnerError) else f"{type(exc).__name__}: {exc}"
            failure = failure.splitlines()[0][:300] if failure else type(exc).__name__
            self.rec.note("runner", "step failed", id=item.id, error=failure)
            with contextlib.suppress(Exception):
                await human.screenshot(f"{file_name(item.id)}-failed")
            run.row = self._failed_row(item, ws, failure)
        finally:
            mark = len(self.agent.lines)
            self.rec.note("human", "close")
            with contextlib.suppress(Exception):
                await page.close()
            if ws:
                await self.agent.wait_line(lambda line: AGENT_LEFT in line, mark, self.options.step_timeout)
            run.seconds = round(time.monotonic() - started, 1)
        return run

    def _index(self, event: Event) -> int:
        return next(i for i in range(len(self.events) - 1, -1, -1) if self.events[i] is event)

    async def _load(self, human: Human, item: SetItem, run: ItemRun) -> None:
        """Load the page until its objective is the item's (the last load is played whatever it is).
        An objective asked of the game (drawn.ask_game) leaves its one-character question in the
        page's chat box, which the agent never got; such a page is played when its objective is the
        item's, as any other."""
        for load in range(1, MAX_LOADS + 1):
            since = self.rec.cursor
            if load == 1:
                await human.page.goto(self.url, timeout=self.options.step_timeout * 1000)
            else:
                self.rec.note("human", "reload")
                await human.page.reload(timeout=self.options.step_timeout * 1000)
            run.loads = load
            await human.wait_socket(since)
            await human.find_canvas()
            await frames(human.page, 3)
            picture = await label_picture(human)
            drawn = self.seen.recognise(picture)
            if drawn is None:
                picture = await settled_label(human, picture)
                drawn = self.seen.recognise(picture)
            distances = self.seen.distances(picture)
            asked = drawn is None
            if asked:  # the question stays in the page's chat box (the agent never got it)
                drawn = await ask_game(human)
                self.seen.learn(drawn, picture)
                run.asked += 1
            self.rec.note("runner", "objective drawn", objective=drawn, load=load, asked=asked,
                          distances=distances[:2])
            if drawn == item.objective:
                return
        self.rec.note("runner", "objective never drawn", wanted=item.objective, loads=MAX_LOADS)

    async def _stage(self, human: Human, item: SetItem, ws: int, run: ItemRun) -> None:
        """Rounds of the human's move and the AI's turn up to the item's stage ("done": until the
        drawer is empty, or the game refuses every drop the human tries)."""
        for turn in range(1, rounds_before(item) + 1):
            drawer = self._drawer(ws)
            if not drawer:
                break
            try:
                await human.drag_piece(ws, order=human_order(item.partner, drawer))
            except StepTimeout:
                if item.stage != "done" or turn == 1:
                    raise
                self.rec.note("runner", "stage ended", reason="no drop accepted", rounds=turn - 1)
                break
            await play_ai_turn(human, self.rec, TurnPlan(turn=turn), self.options.turn_timeout)
            run.rounds = turn

    def _drawer(self, ws: int) -> list[str]:
        state = latest_state(self.events, ws)
        return list(state.get("off_board") or {}) if state is not None else list(human_order(()))

    async def _line(self, human: Human, item: SetItem, ws: int) -> dict[str, Any]:
        shot = file_name(item.id)
        turn = None
        if item.moving:
            drawer = self._drawer(ws)
            if drawer:
                await human.drag_piece(ws, order=human_order(item.partner, drawer))
            else:  # End Turn needs a move: a piece on the board moved
                await human.move_board_piece(ws, order=human_order(item.partner))
            await human.type_chat(item.say)
            await human.screenshot(f"{shot}-line")
            since = self.rec.cursor
            request_event = await human.end_turn(then_send=item.say)
            turn = self._index(request_event)
            request = chat_request(self.events, since, ws, item.say)
            if request is None:
                raise StepTimeout(f"no chatRequest for {item.say!r} on socket {ws}")
        else:
            await human.type_chat(item.say)
            await human.screenshot(f"{shot}-line")
            request = self._index(await human.send_chat(item.say))
        heard = await self._reply(item.say, request, ws)
        ms = await self._page_ms(human, item.say, heard.text)
        self.rec.note("runner", "reply", id=item.id, text=heard.text, ms_page=ms, ms_runner=heard.ms(self.events))
        await human.screenshot(f"{shot}-reply")
        line = self.events[request]
        objective = str(line.msg.get("objective") or item.objective)
        moving_now = ""
        if turn is not None:
            with contextlib.suppress(StepTimeout):  # the turn's move and end, for the move under way
                await self.rec.until(lambda e: e.src == "agent" and e.ws == ws and e.type in ("finish", "error"),
                                     turn, self.options.turn_timeout, "the AI's turn under way to end")
            moving_now = under_way(objective, self.events, turn, request, ws, self.library)
        board = board_lines(objective, line.msg.get("state"), movers_at(self.events, request, ws), self.library)
        return sheet_row(item, objective=objective, board=board, last_said=last_said(self.events, request, ws),
                         move_under_way=moving_now, reply=heard.text,
                         ms=heard.ms(self.events) if ms is None else ms)

    async def _page_ms(self, human: Human, line: str, reply: str) -> float | None:
        """From Send to the reply shown on the page's clock (replies.page_ms), None when unknown."""
        try:
            marks = await human.page.evaluate("() => (window.__runnerMarks || []).slice()")
        except Exception:  # the page is gone: the runner's clock then
            return None
        return page_ms(marks if isinstance(marks, list) else [], line, reply)

    async def _reply(self, line: str, request: int, ws: int) -> Heard:
        """The agent's reply to ``line`` (its chatRequest at event ``request``), shown in the game."""
        loop = asyncio.get_running_loop()
        timeout = self.options.step_timeout
        end = loop.time() + timeout
        while True:
            self.rec.changed.clear()
            records = await asyncio.to_thread(transcript_records, self.transcripts)
            answer, heard = find_reply(self.events, records, line, request, ws, self.taken)
            left = end - loop.time()
            if heard is not None and (heard.shown is not None or left <= 0):
                assert answer is not None
                self.taken.add(answer.key)
                return heard
            if answer is not None and answer.text is None and answer.outcome is not None:
                self.taken.add(answer.key)
                raise StepTimeout(f"the agent answered {line!r} with no line (outcome {answer.outcome})")
            if left <= 0:
                raise StepTimeout(f"waited {timeout:.0f} s for the agent's reply to {line!r}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.rec.changed.wait(), min(POLL_S, left))

    def _failed_row(self, item: SetItem, ws: int, failure: str) -> dict[str, Any]:
        state = latest_state(self.events, ws) if ws else None
        objective = item.objective
        for event in reversed(self.events):
            if ws and event.src == "game" and event.ws == ws and event.msg.get("objective"):
                objective = str(event.msg["objective"])
                break
        board: list[str] = []
        if state is not None:
            with contextlib.suppress(Exception):
                board = board_lines(objective, state, movers_at(self.events, len(self.events), ws), self.library)
        return sheet_row(item, objective=objective, board=board, last_said=last_said(self.events, len(self.events), ws),
                         move_under_way="", reply=None, ms=None, failure=failure)


async def play_set(context: Any, url: str, rec: Recorder, agent: AgentProcess, options: Options) -> list[ItemRun]:
    library = await asyncio.to_thread(load_library)
    player = SetPlayer(context, url, rec, agent, options, library)
    return await player.play(list(options.set_items), options.out / "sheet.jsonl")


def set_report(runs: list[ItemRun], sheet: Path) -> tuple[list[str], dict[str, Any]]:
    """The printed lines and the summary object of a set's run."""
    summary = set_summary(runs, language)
    return set_lines(runs, summary, language, str(sheet)), summary
