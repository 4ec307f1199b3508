"""The reference engine over real WebSockets: matches, seats, turns, refusals, pushes, clocks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.boardgame.support import raw_client, running_engine


async def test_create_play_and_win_against_nobody_else() -> None:
    async with running_engine(games=("tictactoe",), bot="none") as (_engine, url), \
            raw_client(url, "A") as a, raw_client(url, "B") as b:
        created = await a.create()
        assert created["type"] == "create_match_response" and created["game"] == "tictactoe"
        match_id = created["match_id"]
        waiting = await a.state(match_id)
        assert waiting["status"] == "waiting" and waiting["active_agent_id"] == "" and waiting["turn"] == 0
        joined = await b.state(match_id)  # asking for the state of a waiting match takes the free seat
        assert joined["status"] == "started" and joined["active_agent_id"] == "A"
        assert joined["state"]["data"]["marks"] == {"A": "X", "B": "O"}
        assert [x["id"] for x in joined["agents"]] == ["A", "B"]
        for player, row, column in ((a, 1, 1), (b, 2, 1), (a, 1, 2), (b, 2, 2)):
            reply = await player.act(match_id, "place", {"row": row, "column": column})
            assert reply["action_response"]["status"] == "success", reply
        final = await a.act(match_id, "place", {"row": 1, "column": 3})
        assert final["action_response"]["status"] == "success"
        state = await b.state(match_id)
        assert state["status"] == "ended" and state["winners"] == ["A"] and "ended_at" in state
        assert state["state"]["data"]["board"] == ["XXX", "OO.", "..."]
        assert state["active_agent_id"] == ""
        # Everyone seated heard every move, and the end.
        kinds = [p["event"]["data"]["kind"] for p in b.pushes]
        assert kinds.count("action") >= 4
        while "match_ended" not in kinds:
            kinds.append((await b.push())["event"]["data"]["kind"])
        assert all(p["agent_id"] == "B" for p in b.pushes)


async def test_the_bot_takes_the_other_seat_and_answers_moves() -> None:
    async with running_engine(games=("connect_four",), bot="strong") as (_engine, url), raw_client(url, "A") as a:
        created = await a.create("connect_four")
        match_id = created["match_id"]
        state = await a.state(match_id, "connect_four")
        assert state["status"] == "started" and state["active_agent_id"] == "A"
        assert len(state["agents"]) == 2 and state["agents"][1]["id"].startswith("strong-bot")
        reply = await a.act(match_id, "drop", {"column": 4}, "connect_four")
        assert reply["action_response"]["status"] == "success"
        for _ in range(50):
            state = await a.state(match_id, "connect_four")
            if state["active_agent_id"] == "A":
                break
            await asyncio.sleep(0.02)
        assert state["turn"] == 3 and sum(row.count("O") for row in state["state"]["data"]["board"]) == 1


async def test_creator_may_take_the_second_seat_and_the_bot_opens() -> None:
    async with running_engine(games=("tictactoe",), bot="random") as (_engine, url), raw_client(url, "A") as a:
        match_id = (await a.create(seat=2))["match_id"]
        for _ in range(100):
            state = await a.state(match_id)
            if state["active_agent_id"] == "A":
                break
            await asyncio.sleep(0.01)
        assert state["state"]["data"]["marks"]["A"] == "O"
        assert sum(row.count("X") for row in state["state"]["data"]["board"]) == 1


@pytest.mark.parametrize("data, words", [
    ({"row": 1, "column": 1}, None),
    ({"row": 1, "column": 1}, "already taken"),
    ({"row": 9, "column": 1}, "from 1 to 3"),
    ({"cell": 5}, "data.row must be a whole number"),
])
async def test_refusals_carry_a_reason_and_the_legal_actions(data: dict[str, int], words: str | None) -> None:
    async with running_engine(games=("tictactoe",), bot="none") as (_engine, url), \
            raw_client(url, "A") as a, raw_client(url, "B") as b:
        match_id = (await a.create())["match_id"]
        await b.state(match_id)
        if words == "already taken":
            await a.act(match_id, "place", {"row": 1, "column": 1})
            reply = await b.act(match_id, "place", data)
        else:
            reply = await a.act(match_id, "place", data)
        body = reply["action_response"]
        if words is None:
            assert body["status"] == "success"
        else:
            assert body["status"] == "error" and words in body["message"]
            assert {"row": 2, "column": 2} in body["data"]["legal_actions"]


async def test_turn_order_and_membership_are_enforced() -> None:
    async with running_engine(games=("tictactoe",), bot="none") as (_engine, url), \
            raw_client(url, "A") as a, raw_client(url, "B") as b, raw_client(url, "C") as c:
        match_id = (await a.create())["match_id"]
        early = await a.act(match_id, "place", {"row": 1, "column": 1})
        assert early["type"] == "error" and "waiting for an opponent" in early["error"]["message"]
        await b.state(match_id)
        wrong = await b.act(match_id, "place", {"row": 1, "column": 1})
        assert wrong["action_response"]["status"] == "error" and "not your turn" in wrong["action_response"]["message"]
        spectator = await c.state(match_id)  # a full match can be watched, not joined
        assert [x["id"] for x in spectator["agents"]] == ["A", "B"]
        outsider = await c.act(match_id, "place", {"row": 1, "column": 1})
        assert outsider["type"] == "error" and "has no seat" in outsider["error"]["message"]


async def test_malformed_and_impossible_requests_get_error_frames_and_the_connection_lives() -> None:
    async with running_engine(games=("tictactoe",), bot="none") as (_engine, url), raw_client(url, "A") as a:
        cases: list[tuple[dict[str, Any] | str, str]] = [
            ("{not json", "not valid JSON"),
            ('{"version": "1.0.0", "type": "dance", "agent_id": "A"}', "unknown request message type"),
            (a.envelope("get_state", game="tictactoe", match_id="nope", state={"version": "1.0.0"}),
             "no match 'nope'"),
            (a.envelope("create_match", game="chess", settings={"version": "1.0.0", "data": {}}),
             "does not host 'chess'"),
            (a.envelope("create_match", game="tictactoe", settings={"version": "1.0.0", "data": {"colour": "red"}}),
             "unknown settings"),
            (a.envelope("create_match", game="tictactoe", settings={"version": "1.0.0", "data": {"seat": 3}}),
             "seat must be 1"),
            (a.envelope("create_match", game="tictactoe", settings={"version": "1.0.0", "data": {"bot": "god"}}),
             "bot must be one of"),
            ({"version": "1.0.0", "type": "get_matches", "agent_id": "bad\nid"}, "must be a non-empty printable"),
        ]
        for frame, words in cases:
            reply = await a.ask(frame)
            assert reply["type"] == "error" and words in reply["error"]["message"], (frame, reply)
        unknown = await a.ask(a.envelope("create_match", game="chess", settings={"version": "1.0.0", "data": {}}))
        assert unknown["error"]["data"]["games"] == ["tictactoe"]
        assert (await a.create())["type"] == "create_match_response"


async def test_wrong_game_names_the_right_one() -> None:
    async with running_engine(games=("tictactoe", "connect_four"), bot="none") as (_engine, url), \
            raw_client(url, "A") as a:
        match_id = (await a.create("connect_four"))["match_id"]
        reply = await a.state(match_id, "tictactoe")
        assert reply["type"] == "error" and reply["error"]["data"] == {"game": "connect_four"}


async def test_get_matches_lists_own_and_joinable_matches() -> None:
    async with running_engine(games=("tictactoe",), bot="none") as (_engine, url), \
            raw_client(url, "A") as a, raw_client(url, "B") as b:
        first = (await a.create())["match_id"]
        listed = await b.ask(b.envelope("get_matches"))
        assert listed["type"] == "get_matches_response"
        assert [(m["match_id"], m["status"]) for m in listed["matches"]] == [(first, "waiting")]
        await b.state(first)
        assert (await b.ask(b.envelope("get_matches")))["matches"][0]["status"] == "started"


async def test_an_agent_that_does_not_move_in_time_forfeits() -> None:
    async with running_engine(games=("tictactoe",), bot="random", turn_timeout=0.2) as (_engine, url), \
            raw_client(url, "A") as a:
        match_id = (await a.create())["match_id"]
        for _ in range(100):
            await asyncio.sleep(0.05)
            state = await a.state(match_id)
            if state["status"] == "ended":
                break
        assert state["status"] == "ended" and state["winners"] == [f"random-bot-{match_id}"]
        assert "did not act within" in state["state"]["data"]["end_reason"]


async def test_a_match_whose_agents_left_is_abandoned_after_the_grace() -> None:
    async with running_engine(games=("tictactoe",), bot="strong", reconnect_grace=0.1) as (engine, url):
        async with raw_client(url, "A") as a:
            match_id = (await a.create())["match_id"]
        await asyncio.sleep(0.4)
        match = engine.match(match_id)
        assert match is not None and match.status == "abandoned" and match.winners == []
        async with raw_client(url, "B") as b:
            listed = await b.ask(b.envelope("get_matches"))
            assert listed["matches"] == []  # abandoned matches are neither B's nor joinable
            state = await b.state(match_id)
            assert state["status"] == "abandoned"


async def test_coming_back_within_the_grace_keeps_the_match() -> None:
    async with running_engine(games=("tictactoe",), bot="strong", reconnect_grace=0.3) as (_engine, url):
        async with raw_client(url, "A") as a:
            match_id = (await a.create())["match_id"]
        async with raw_client(url, "A") as a:
            await a.ask(a.envelope("get_matches"))  # an agent is known by its frames, not its socket
            await asyncio.sleep(0.5)
            state = await a.state(match_id)
            assert state["status"] == "started"


async def test_connection_and_match_limits_hold() -> None:
    async with running_engine(games=("tictactoe",), bot="none", max_matches=2) as (_engine, url), \
            raw_client(url, "A") as a:
        assert (await a.create())["type"] == "create_match_response"
        assert (await a.create())["type"] == "create_match_response"
        full = await a.create()
        assert full["type"] == "error" and "holds 2 matches" in full["error"]["message"]
