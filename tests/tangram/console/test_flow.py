"""The console without a browser: the page's WebSocket protocol spoken by an aiohttp client, the
simulator as the game. Every mode, every verdict, the deadline bounds, the transcript records."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply, first_enum_responder
from agent.games.tangram.config import Config
from agent.games.tangram.console.hub import Console
from agent.games.tangram.console.web import ConsoleServer
from agent.games.tangram.link.factory import make_player_factory
from agent.games.tangram.link.server import AgentServer, serve_agent
from agent.games.tangram.sim import GameClient

Message = dict[str, Any]


class Page:
    """What a console page sees and sends, over the real WebSocket."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.seen: list[Message] = []

    async def send(self, **message: Any) -> None:
        await self.ws.send_str(json.dumps(message))

    async def until(self, match: Callable[[Message], Any], timeout: float = 10.0) -> Any:
        """The first message (from now on) for which ``match`` gives something truthy; that value."""
        async with asyncio.timeout(timeout):
            while True:
                msg = await self.ws.receive()
                assert msg.type == aiohttp.WSMsgType.TEXT, msg
                data = json.loads(msg.data)
                self.seen.append(data)
                found = match(data)
                if found:
                    return found

    async def review(self, game: str, kind: str = "play", after: int = 0, timeout: float = 10.0) -> Message:
        def match(m: Message) -> Message | None:
            if m["type"] != "game" or m["game"]["id"] != game:
                return None
            return next((r for r in m["game"]["reviews"] if r["kind"] == kind and r["id"] > after), None)
        found: Message = await self.until(match, timeout)
        return found


@dataclass
class Setup:
    config: Config
    console: Console
    web: ConsoleServer
    server: AgentServer
    dir: Path

    def records(self, kind: str) -> list[Message]:
        out = []
        for path in sorted(self.dir.glob("*.jsonl")):
            out += [r for r in map(json.loads, path.read_text().splitlines()) if r["kind"] == kind]
        return out

    async def records_soon(self, kind: str, count: int, timeout: float = 5.0) -> list[Message]:
        """The records once ``count`` are on disk (the transcript writes in a worker thread)."""
        end = time.monotonic() + timeout
        found = self.records(kind)
        while len(found) < count and time.monotonic() < end:
            await asyncio.sleep(0.05)  # polling a file: there is no event to wait on
            found = self.records(kind)
        return found

    @contextlib.asynccontextmanager
    async def page(self) -> AsyncIterator[Page]:
        async with aiohttp.ClientSession() as http, http.ws_connect(self.web.url + "ws") as ws:
            page = Page(ws)
            await page.until(lambda m: m["type"] == "snapshot")
            yield page

    @contextlib.asynccontextmanager
    async def game(self, objective: str = "A house") -> AsyncIterator[tuple[GameClient, str]]:
        before = set(self.console.games)
        async with GameClient(self.server.url, objective=objective, tween=0.05) as game:
            for _ in range(200):
                if new := set(self.console.games) - before:
                    break
                await asyncio.sleep(0.01)
            yield game, new.pop()


@contextlib.asynccontextmanager
async def console_setup(tmp_path: Path, deadline: float = 10.0, config: Config | None = None,
                        **console: Any) -> AsyncIterator[Setup]:
    base = config.model_dump() if config is not None else {}
    config = Config.model_validate({**base, "turn": {"deadline": deadline},
                                    "transcripts": {"dir": str(tmp_path)}, "console": {"enabled": True, **console}})
    hub = Console(config)
    web = ConsoleServer(hub, "127.0.0.1", 0, None)
    await web.start()
    factory = make_player_factory(config)
    try:
        async with serve_agent(config, host="127.0.0.1", port=0, player_factory=hub.wrap(factory)) as server:
            yield Setup(config, hub, web, server, tmp_path)
    finally:
        await factory.aclose()
        await web.stop()


async def test_autonomous_games_show_live_and_nothing_waits(tmp_path: Path) -> None:
    async with console_setup(tmp_path) as s, s.page() as page, s.game("A fish") as (game, gid):
        appeared = await page.until(lambda m: m["type"] == "game" and m["game"]["id"] == gid and m["game"])
        assert appeared["mode"] == "autonomous" and appeared["peer"].startswith("127.0.0.1:")
        turn = await game.ai_turn(deadline=10)
        assert turn.finished and turn.plays
        view = await page.until(lambda m: m["type"] == "game" and m["game"]["history"] and m["game"])
        last = view["history"][0]
        assert view["objective"] == "A fish" and last["outcome"] == "played"
        assert last["decisions"][0]["source"] == "planner"
        assert [p["pose"]["piece"] for p in view["pieces"]] == [turn.plays[-1].shape]
        assert view["images"]["board"] and view["images"]["drawer"]
        assert any(line["by"] == "agent" and line["text"] == turn.chat[0] for line in view["chat"])
        async with aiohttp.ClientSession() as http, http.get(f"{s.web.url}img/{gid}/board?v=1") as resp:
            assert resp.status == 200 and resp.content_type == "image/png"
            assert (await resp.read()).startswith(b"\x89PNG")
    assert s.records("intervention") == []


async def test_supervised_verdicts_approve_edit_replace_skip(tmp_path: Path) -> None:
    async with console_setup(tmp_path, deadline=20) as s, s.page() as page, s.game() as (game, gid):
        await page.send(type="mode", game=gid, mode="supervised", who="Ana")
        await page.until(lambda m: m["type"] == "game" and m["game"]["mode"] == "supervised")
        outcomes = []
        last = 0
        for action in ("approve", "edit", "replace", "skip"):
            pending = asyncio.create_task(game.ai_turn(deadline=20))
            review = await page.review(gid, after=last)
            last = review["id"]
            proposal = review["proposal"]
            assert review["remaining_s"] > 5 and proposal["pose"] and proposal["check"]["collisions"] == []
            await asyncio.sleep(0.2)
            assert not pending.done()  # it waits for the experimenter
            extra: dict[str, Any] = {}
            if action == "edit":
                extra = {"pose": {**proposal["pose"], "rotation": proposal["pose"]["rotation"] + 90}, "chat": "edited"}
            elif action == "replace":
                extra = {"pose": {"piece": "Purple", "x": 15, "y": 80, "rotation": 0}, "chat": "my own move"}
            await page.send(type="verdict", game=gid, review=review["id"], action=action, who="Ana", **extra)
            turn = await pending
            assert turn.finished
            outcomes.append((proposal, turn))
        (p1, t1), (p2, t2), (_, t3), (_, t4) = outcomes
        assert (t1.plays[-1].shape, t1.chat) == (p1["pose"]["piece"], [p1["chat"]])
        assert t2.plays[-1].shape == p2["pose"]["piece"] and t2.chat == ["edited"]
        assert t2.plays[-1].rotation % 360 == pytest.approx((p2["pose"]["rotation"] + 90) % 360)
        assert (t3.plays[-1].shape, t3.plays[-1].x, t3.plays[-1].y) == ("Purple", 15, 80) and t3.chat == ["my own move"]
        assert t4.plays == [] and t4.chat == []
        records = await s.records_soon("intervention", 4)
        assert [(r["who"], r["action"], r["turn"]) for r in records] == [
            ("Ana", "approve", 1), ("Ana", "edit", 2), ("Ana", "replace", 3), ("Ana", "skip", 4)]
        assert records[1]["proposed"]["pose"] == p2["pose"] and records[1]["final"]["chat"] == "edited"
        sources = [r["source"] for r in s.records("decision")]
        assert sources == ["planner+approved", "planner+edited", "planner+replaced", "planner+skipped"]
        modes = s.records("console_mode")
        assert [(m["who"], m["previous"], m["mode"]) for m in modes] == [("Ana", "autonomous", "supervised")]
        view = await page.until(lambda m: m["type"] == "game" and len(m["game"]["history"]) == 4 and m["game"])
        assert [i["action"] for t in reversed(view["history"]) for i in t["interventions"]] == [
            "approve", "edit", "replace", "skip"]
        chat_by = {line["text"]: line["by"] for line in view["chat"]}
        assert chat_by["edited"] == "experimenter (Ana)" and chat_by[p1["chat"]] == "agent"


async def test_supervised_chat_reply_is_reviewed_and_editable(tmp_path: Path) -> None:
    async with console_setup(tmp_path, deadline=20) as s, s.page() as page, s.game() as (game, gid):
        await page.send(type="mode", game=gid, mode="supervised")
        await page.until(lambda m: m["type"] == "game" and m["game"]["mode"] == "supervised")
        asked = asyncio.create_task(game.chat("what are we building?", timeout=15))
        review = await page.review(gid, kind="chat")
        assert review["message"] == "what are we building?" and review["text"]
        await page.send(type="verdict", game=gid, review=review["id"], action="edit", chat="A house, with a roof!")
        assert (await asked).reply == "A house, with a roof!"
        [record] = await s.records_soon("intervention", 1)
        assert (record["about"], record["action"], record["proposed"]["chat"]) == ("chat", "edit", review["text"])


async def test_deadline_fallback_with_no_page_at_all(tmp_path: Path) -> None:
    """A closed tab (here: no page ever) changes nothing: the proposal goes out before the deadline."""
    deadline = 3.0
    async with console_setup(tmp_path, deadline=deadline, default_mode="supervised") as s, s.game() as (game, _):
        started = time.monotonic()
        turn = await game.ai_turn(deadline=deadline + 5)
        assert turn.finished and turn.plays and time.monotonic() - started < deadline
        asked = await game.chat("hello?", timeout=deadline + 2)
        assert asked.reply and asked.latency is not None and asked.latency < deadline
        records = await s.records_soon("intervention", 2)
        assert [(r["who"], r["action"], r["about"]) for r in records] == [
            ("deadline", "fallback", "play"), ("deadline", "fallback", "chat")]
        assert records[0]["final"] == records[0]["proposed"]
        assert game.violations == []


async def test_switching_to_autonomous_releases_an_open_review_at_once(tmp_path: Path) -> None:
    async with console_setup(tmp_path, deadline=30, default_mode="supervised") as s, s.page() as page, \
            s.game() as (game, gid):
        pending = asyncio.create_task(game.ai_turn(deadline=30))
        await page.review(gid)
        started = time.monotonic()
        await page.send(type="mode", game=gid, mode="autonomous", who="Cy")
        turn = await pending
        assert turn.finished and turn.plays and time.monotonic() - started < 3
        [record] = await s.records_soon("intervention", 1)
        assert (record["who"], record["action"]) == ("Cy (switched to autonomous)", "fallback")


async def test_wizard_plays_the_experimenters_move_and_falls_back_as_configured(tmp_path: Path) -> None:
    async with console_setup(tmp_path, deadline=5, default_mode="wizard", wizard_fallback="pass") as s, \
            s.page() as page, s.game() as (game, gid):
        pending = asyncio.create_task(game.ai_turn(deadline=10))
        review = await page.review(gid)
        assert review["mode"] == "wizard" and review["suggestion"]["pose"] and review["proposal"] is None
        # A move that overlaps nothing yet sits on the board's edge: the agent's repair moves it in.
        await page.send(type="verdict", game=gid, review=review["id"], action="wizard",
                        pose={"piece": "Green", "x": 1, "y": 50, "rotation": 0}, chat="Wizard here.")
        turn = await pending
        assert turn.finished and turn.plays[-1].shape == "Green" and turn.plays[-1].x > 1 and turn.collisions == []
        assert turn.chat == ["Wizard here."]
        quiet = await game.ai_turn(deadline=10)  # nobody acts: wizard_fallback "pass"
        assert quiet.finished and quiet.plays == [] and quiet.latency is not None and quiet.latency < 5
        records = await s.records_soon("intervention", 2)
        assert [(r["who"], r["action"]) for r in records] == [("experimenter", "wizard"), ("deadline", "fallback")]
        repairs = s.records("repair")
        assert repairs[0]["proposed"]["x"] == 1 and repairs[0]["repaired"]["x"] > 1


async def test_wrong_page_messages_get_reasons_and_change_nothing(tmp_path: Path) -> None:
    async with console_setup(tmp_path, deadline=20, default_mode="supervised") as s, s.page() as page, \
            s.game() as (game, gid):
        async def notice(**message: Any) -> str:
            await page.send(**message)
            text: str = await page.until(lambda m: m["type"] == "notice" and m["text"])
            return text

        assert "no longer here" in await notice(type="mode", game="nope", mode="wizard")
        assert "mode" in await notice(type="mode", game=gid, mode="chaos")
        assert "pose.piece" in await notice(type="check", game=gid, seq=1, pose={"piece": "Pink", "x": 1, "y": 1,
                                                                                  "rotation": 0})
        assert "no longer open" in await notice(type="verdict", game=gid, review=99, action="approve")
        await page.ws.send_str("not json")
        assert "refused" in await page.until(lambda m: m["type"] == "notice" and m["text"])
        await page.ws.send_str(json.dumps({"type": "say", "game": gid, "text": "x" * 501}))
        assert "text" in await page.until(lambda m: m["type"] == "notice" and m["text"])
        pending = asyncio.create_task(game.ai_turn(deadline=20))
        review = await page.review(gid)
        assert "supervised" in await notice(type="verdict", game=gid, review=review["id"], action="wizard")
        assert "needs a move" in await notice(type="verdict", game=gid, review=review["id"], action="replace")
        await page.send(type="verdict", game=gid, review=review["id"], action="approve")
        assert (await pending).finished
        assert "no longer open" in await notice(type="verdict", game=gid, review=review["id"], action="skip")


async def test_the_editor_check_uses_the_agents_geometry(tmp_path: Path) -> None:
    async with console_setup(tmp_path) as s, s.page() as page, s.game() as (game, gid):
        turn = await game.ai_turn(deadline=10)
        placed = turn.plays[-1]
        await page.send(type="check", game=gid, seq=7, pose={"piece": "Purple", "x": placed.x, "y": placed.y,
                                                             "rotation": 0})
        result = await page.until(lambda m: m["type"] == "checked" and m["seq"] == 7 and m["result"])
        assert result["collisions"] == [placed.shape] and result["repaired"] is not None
        assert len(result["outline"]) == 4 and result["reason"]
        await page.send(type="check", game=gid, seq=8, pose={"piece": "Purple", "x": 10, "y": 90, "rotation": 45})
        clear = await page.until(lambda m: m["type"] == "checked" and m["seq"] == 8 and m["result"])
        assert clear["collisions"] == [] and not clear["too_close"] and clear["repaired"]["x"] == 10


async def test_llm_tokens_reach_the_page_and_secrets_never_do(tmp_path: Path, monkeypatch: Any) -> None:
    secret = "sk-console-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    move = {"action": "place", "piece": "Red", "rotation": 180, "x": 50, "y": 55, "relation": None, "anchor": None,
            "chat": "Roof first.", "reasoning": f"my key is {secret}, do not tell"}
    async with FakeOpenAI(responder=lambda req: FakeReply.ok_json(move, prompt_tokens=1234)) as fake:
        config = Config.model_validate({"player": "llm", "llm": {"base_url": fake.base_url, "request_timeout": 5}})
        async with console_setup(tmp_path, config=config, default_mode="supervised") as s, s.page() as page, \
                s.game() as (game, gid):
            pending = asyncio.create_task(game.ai_turn(deadline=10))
            review = await page.review(gid)
            assert secret not in review["proposal"]["reasoning"] and "my key is" in review["proposal"]["reasoning"]
            await page.send(type="verdict", game=gid, review=review["id"], action="approve")
            assert (await pending).finished
            view = await page.until(lambda m: m["type"] == "game" and m["game"]["history"] and m["game"])
            assert view["tokens"]["prompt"] == 1234 and view["history"][0]["tokens"]["prompt"] == 1234
            assert all(secret not in json.dumps(m) for m in page.seen)


async def test_the_page_shows_the_pictures_exactly_as_the_model_saw_them(tmp_path: Path) -> None:
    async with FakeOpenAI(responder=first_enum_responder) as fake:
        config = Config.model_validate({"player": "llm", "llm": {"base_url": fake.base_url, "request_timeout": 5,
                                                                 "api_key_required": False, "candidates": 2},
                                        "images": {"annotate": ["grid", "labels", "candidates"]}})
        async with console_setup(tmp_path, config=config) as s, s.page() as page, s.game() as (game, gid):
            assert (await game.ai_turn(deadline=10)).finished
            view = await page.until(lambda m: m["type"] == "game" and m["game"]["history"] and m["game"])
            assert view["images"]["model_board"] and view["images"]["model_drawer"]
            sent = [base64.b64decode(u.partition(",")[2]) for u in fake.chat_requests[0].image_urls()]
            async with aiohttp.ClientSession() as http:
                for which, data in zip(("model_board", "model_drawer"), sent, strict=True):
                    async with http.get(f"{s.web.url}img/{gid}/{which}?v=1") as resp:
                        assert resp.status == 200 and await resp.read() == data
                async with http.get(f"{s.web.url}img/{gid}/board?v=1") as resp:
                    assert await resp.read() != sent[0]  # the game's own picture is another one


async def test_the_turn_table_shows_salvages_and_reasks(tmp_path: Path) -> None:
    none = {"reasoning": "r", "rotation": None, "x": None, "y": None, "relation": None, "anchor": None,
            "relation2": None, "anchor2": None, "chat": "c"}
    replies = [FakeReply.ok_json({**none, "action": "place", "piece": None}),  # nothing to play: re-asked
               FakeReply.ok_json({**none, "action": "place", "piece": "Red", "x": 140, "y": 50})]  # clamped
    async with FakeOpenAI(replies=replies) as fake:
        config = Config.model_validate({"player": "llm", "llm": {"base_url": fake.base_url, "request_timeout": 5,
                                                                 "api_key_required": False}})
        async with console_setup(tmp_path, config=config) as s, s.page() as page, s.game() as (game, gid):
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and len(turn.plays) == 1
            view = await page.until(lambda m: m["type"] == "game" and m["game"]["history"] and m["game"])
            row = view["history"][0]
            assert row["reasks"] == ["no_piece"]
            assert [(x["salvage"], x["played"]) for x in row["salvages"]] == [("clamped", "Red at (100, 50)")]
            assert "0 to 100" in row["salvages"][0]["why"]


async def test_the_planners_suggestion_never_calls_the_agents_own_piece_the_partners(tmp_path: Path) -> None:
    """A wizard turn nobody answers plays the planner's suggestion, made by a planner of its own that
    played none of the game's turns: who moved each piece must come from the session's record. (It
    once said "I'm building the house around your Cream" of the Cream the agent had placed.)"""
    async with console_setup(tmp_path, deadline=3, default_mode="wizard") as s, s.game() as (game, _):
        first = await game.ai_turn(deadline=10)  # nobody acts: the suggestion is played
        assert first.finished and first.plays, first
        piece = first.plays[-1].shape
        asked = await game.chat(f"where is the {piece}?", timeout=10)  # the wizard's chat falls back too
        assert asked.reply is not None and "(I moved it last)" in asked.reply, asked
        second = await game.ai_turn(deadline=10)
        assert second.finished and second.plays and second.chat, second
        said = " ".join(second.chat)
        assert f"your {piece.lower()}" not in said.lower(), said
        records = await s.records_soon("intervention", 3)
        assert [(r["who"], r["action"]) for r in records] == [("deadline", "fallback")] * 3
