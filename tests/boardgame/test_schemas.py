"""Every frame the agent and the engine send, validated against the protocol's published JSON Schemas.

The schemas (github.com/Boardgame-Protocol/json-schemas) carry no licence, so they are not in this
repository: point BOARDGAME_SCHEMAS_DIR at a local checkout (the folder holding ``schemas/1.0.0``,
or ``schemas/1.0.0`` itself) to run these tests; without it they skip and say why.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from agent.games.boardgame.client import ClientSettings, MatchClient
from agent.games.boardgame.players.base import MovePlayer, Player, Turn
from agent.games.boardgame.players.offline import make_offline
from agent.games.boardgame.protocol import GetMatches, dump, parse_client_frame, parse_server_frame
from agent.games.boardgame.rules.base import GameRules, WireAction
from tests.boardgame.support import FrameLog, frame_log, raw_client, running_engine

__all__ = ["frame_log"]

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (pip install -e '.[dev]')")

ENV = "BOARDGAME_SCHEMAS_DIR"

REQUESTS = {"create_match", "get_matches", "get_state", "perform_action"}
RESPONSES = {"create_match_response": "create_match", "get_matches_response": "get_matches",
             "get_state_response": "get_state", "perform_action_response": "perform_action",
             "push_event": "push_event"}


def schema_root() -> Path:
    value = os.environ.get(ENV)
    if not value:
        pytest.skip(f"{ENV} is not set: fetch github.com/Boardgame-Protocol/json-schemas and point {ENV} at it "
                    "to validate every frame against the published schemas")
    root = Path(value)
    for candidate in (root / "schemas" / "1.0.0", root / "1.0.0", root):
        if (candidate / "requests" / "get_state.json").is_file():
            return candidate
    pytest.fail(f"{ENV}={value} holds no schemas/1.0.0/requests/get_state.json")


def validator(path: Path) -> Any:
    schema = json.loads(path.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def check_date_times(frame: dict[str, Any]) -> None:
    # jsonschema checks "date-time" only with an optional package; check RFC 3339 here regardless.
    for key in ("started_at", "ended_at"):
        if key in frame:
            assert isinstance(frame[key], str) and frame[key].endswith("Z"), frame[key]
            datetime.fromisoformat(frame[key].replace("Z", "+00:00"))


def validate_all(root: Path, log: FrameLog) -> set[str]:
    used: set[str] = set()
    for frame in log.agent:
        kind = frame["type"]
        assert kind in REQUESTS, f"the agent sent a {kind} frame, which is not a request"
        errors = sorted(validator(root / "requests" / f"{kind}.json").iter_errors(frame), key=str)
        assert not errors, f"agent {kind} frame {frame} fails the schema: {errors[0].message}"
        used.add(f"requests/{kind}")
    for frame in log.engine:
        kind = frame.get("type")
        if kind == "error":
            # The site's error shape; no schema was published for it.
            assert set(frame) == {"version", "type", "game", "match_id", "agent_id", "error"}
            assert set(frame["error"]) == {"version", "message", "data"} and frame["error"]["message"]
            used.add("error")
            continue
        assert kind in RESPONSES, f"the engine sent an unexpected {kind} frame"
        errors = sorted(validator(root / "responses" / f"{RESPONSES[kind]}.json").iter_errors(frame), key=str)
        assert not errors, f"engine {kind} frame {frame} fails the schema: {errors[0].message}"
        check_date_times(frame)
        used.add(f"responses/{RESPONSES[kind]}")
    return used


class Stubborn(Player):
    """Sends an out-of-range action first (with local checks off), then plays well."""

    label = "stubborn"

    def __init__(self, rules: GameRules[Any]) -> None:
        self.inner = make_offline("best", rules, random.Random(1), seconds=0.02)
        self.first = True

    async def choose(self, turn: Turn) -> WireAction:
        if self.first:
            self.first = False
            return WireAction(turn.rules.action_type, {"row": 9, "column": 9, "extra": [1]})
        return await self.inner.choose(turn)


def best(rules: GameRules[Any]) -> MovePlayer:
    return make_offline("best", rules, random.Random(2), seconds=0.02)


async def test_every_frame_sent_matches_the_published_schemas(frame_log: FrameLog) -> None:
    root = schema_root()
    async with running_engine(games=("tictactoe", "connect_four"), bot="strong", seed=3,
                              reconnect_grace=0.05, turn_timeout=5) as (engine, url):
        base = {"url": url, "poll_seconds": 1.0, "reconnect_delay": 0.02}
        # 1. An agent against the strong bot, with an illegal action refused by the engine.
        await MatchClient(ClientSettings(agent_id="A", game="tictactoe", check_locally=False, **base),  # type: ignore[arg-type]
                          Stubborn, best).play()
        # 2. Two agents in one connect-four match: join by get_state, pushes to both, a dropped link.
        created: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def on_event(kind: str, data: dict[str, Any]) -> None:
            if kind == "match_created":
                created.set_result(data["match_id"])
            if kind == "push" and data.get("kind") == "action" and data.get("turn") == 3:
                engine.drop_connections()

        host = asyncio.create_task(MatchClient(
            ClientSettings(agent_id="A", game="connect_four", create_settings={"bot": "none", "seat": 2, "name": "Ann"},
                           **base), best, best, on_event).play())  # type: ignore[arg-type]
        guest = MatchClient(ClientSettings(agent_id="B", match_id=await created, **base), best, best)  # type: ignore[arg-type]
        await asyncio.gather(host, guest.play())
        # 3. Our get_matches, every kind of error frame, and an abandoned match listed as ended.
        frame_log.agent.append(json.loads(dump(GetMatches(agent_id="C"))))
        async with raw_client(url, "C") as c:
            await c.create(colour="red")
            await c.ask("{broken")
            await c.state("m-none")
            match_id = (await c.create())["match_id"]
            await c.act(match_id, "place", {"row": 1, "column": 1}, game="connect_four")
            await c.act(match_id, "place", {"row": 2, "column": 2})
        await asyncio.sleep(0.2)
        async with raw_client(url, "C") as c:
            listed = await c.ask(c.envelope("get_matches"))
            assert listed["matches"][0]["status"] == "ended"
            await c.state(match_id)
    used = validate_all(root, frame_log)
    expected = {f"requests/{k}" for k in REQUESTS} | {f"responses/{v}" for v in RESPONSES.values()} | {"error"}
    assert used == expected, f"frames never produced: {sorted(expected - used)}"


def test_the_published_examples_parse_with_our_models() -> None:
    root = schema_root()
    examples = root / "examples"
    for path in sorted((examples / "requests").glob("*.json")):
        parse_client_frame(path.read_text(encoding="utf-8"))
    for path in sorted((examples / "responses").glob("*.json")):
        frame = json.loads(path.read_text(encoding="utf-8"))
        frame.setdefault("type", f"{path.stem}_response")  # as push_event, a response may leave it out
        parse_server_frame(json.dumps(frame))


def test_the_sites_documented_variants_are_what_the_schemas_reject() -> None:
    """Our tolerance is needed: the site's get_state_response fails the schema, yet we read it."""
    root = schema_root()
    site = {
        "version": "1.0.0", "type": "get_state_response", "game": "g", "match_id": "m", "agent_id": "a2",
        "status": "started", "phase": "main", "turn": 1, "stage": "draw", "started_at": "2025-05-05T10:00:00Z",
        "ended_at": None, "active_agent_id": "a2", "agents": [{"id": "a1", "name": "One", "type": "human"}],
        "state": {"version": "1.0.0", "data": {}},
    }
    assert list(validator(root / "responses" / "get_state.json").iter_errors(site))
    parse_server_frame(json.dumps(site))
