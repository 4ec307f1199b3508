"""Hostile frames over a real socket (issue 6, items 1 and 6): the connection survives, every turn
ends, and every frame the agent sends is one the game can take."""

from __future__ import annotations

import asyncio
import base64
import io
import itertools
import json
import logging
import random

import pytest
from PIL import Image
from websockets.asyncio.client import connect

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient
from agent.games.tangram.sim.simgame import SimGame, frame_text
from tests.tangram.support import (
    MOVE,
    assert_agent_frames_valid,
    good_replies,
    llm_config,
    planner_config,
    wait_until,
)

DIGITS = "1" * 5000

# (frame, what the agent answers while no turn runs: "finish" for an unreadable playRequest (after a
# chat line; the shipped game ignores error frames), "chat" for an unreadable chatRequest, None when
# nothing is owed to the game)
BAD_FRAMES: list[tuple[str | bytes, str | None]] = [
    ("{not json", None),
    ("", None),
    ("[1, 2, 3]", None),
    ('"just a string"', None),
    ("null", None),
    ('{"objective": "A house", "state": {}}', None),  # no type
    ('{"type": null}', None),
    ('{"type": "dance"}', None),
    ('{"type": 5}', None),
    ('{"type": ["playRequest"]}', "finish"),  # the type hint is a guess from the text
    ('{"type": "playRequest", "state": 17}', "finish"),
    ('{"type": "playRequest", "objective": 5}', "finish"),
    ('{"type": "playRequest", "board_img": 12345}', "finish"),
    ('{"type": "playRequest", "timestamp": {"a": 1}}', "finish"),
    ('{"type": "playRequest", "state": {"on_board": "nope"}}', "finish"),
    ('{"type": "chatRequest", "message": ["hi"]}', "chat"),
    ('{"type": "playRequest", "timestamp": NaN}', "finish"),
    ('{"type": "chatRequest", "message": "hi", "timestamp": Infinity}', "chat"),
    ('{"type": "playRequest", "timestamp": -Infinity}', "finish"),
    ('{"type": "playRequest", "timestamp": ' + DIGITS + "}", "finish"),  # past Python's int-digit limit
    ("[" * 100_000 + "]" * 100_000, None),
    (b"\xff\xfe\x00\x01 not utf-8 \x80", None),
    (b"", None),
    ('{"type": "playRequest", ' + '"x": "' + "y" * 3_000_000, "finish"),  # huge and cut short
]

# Frames that are readable but odd: the agent takes them without a turn starting or anything owed.
ODD_FRAMES: list[str] = [
    '{"type": "playFeedback", "state": {"on_board": {"Pink": {"position": "(1, 2)"}}}}',
    '{"type": "playFeedback", "state": {"on_board": {"Red": {"position": [1e999, 2]}}}}',
    # A number no float can hold drops that piece's entry (logged), like any broken entry.
    '{"type": "playFeedback", "state": {"on_board": {"Red": {"position": [1' + "0" * 400 + ', 2]}}}}',
    '{"type": "playFeedback", "state": {"off_board": {"Red": {"rotation": 1' + "0" * 400 + '}}}}',
    '{"type": "playFeedback", "objective": "' + "z" * 2_000_000 + '"}',
    '{"type": "error", "message": "Error: No message type in received JSON"}',
    '{"type": "chatRequest", "message": ""}',
]


async def test_bad_frames_one_after_another_each_followed_by_a_normal_turn(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    async with serve_agent(planner_config(tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A house", human="random", seed=3) as game:
            for raw, answer in BAD_FRAMES:
                if answer == "finish":  # in the game, this request starts the AI's turn
                    game.game.start_ai_turn()
                await game.send_raw(raw)
                if answer == "finish":
                    await wait_until(lambda: game.game.turn_owner == "human", 5, "the finish")
                elif answer is not None:  # before the next turn, or it would end that turn
                    got = await game.next_frame(timeout=5, type=answer)
                    assert got is not None, f"no {answer} frame for {str(raw)[:60]!r}"
                turn = await game.ai_turn(deadline=10)
                assert turn.finished, (str(raw)[:60], turn.ended_by)
                await game.human_turn()
            for raw in ODD_FRAMES:
                await game.send_raw(raw)
                turn = await game.ai_turn(deadline=10)
                assert turn.finished
            assert game.connected
            assert_agent_frames_valid(game)
        await wait_until(lambda: not server.sessions, what="the session to end")
    bad_lines = [r for r in caplog.records
                 if r.name == "agent.games.tangram.link.session" and "bad frame" in r.getMessage()]
    assert len(bad_lines) == len(BAD_FRAMES)
    assert all(len(r.getMessage()) < 400 for r in bad_lines)  # one clear line, not the frame
    records = [json.loads(line) for line in server.transcript_paths()[0].read_text().splitlines()]
    assert sum(r["kind"] == "bad_frame" for r in records) == len(BAD_FRAMES)
    ends = [r for r in records if r["kind"] == "turn_end"]
    assert len(ends) == len(BAD_FRAMES) + len(ODD_FRAMES) and all(r["outcome"] != "cancelled" for r in ends)
    assert records[-1]["kind"] == "session_end"


async def test_a_bad_frame_during_a_turn_ends_it_and_the_next_turn_plays(tmp_path):
    stall = asyncio.Event()

    async def responder(req):
        if stall.is_set():
            return FakeReply.ok_json(MOVE)
        return FakeReply.ok_json(MOVE, delay=60)

    async with FakeOpenAI(responder=responder) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, deadline=20), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url) as game:
            for bad in ("{oops", b"\xff\x00", '{"type": "playFeedback", "state": 3}',
                        '{"type": "chatRequest", "message": 7}'):
                turn_task = asyncio.create_task(game.ai_turn(deadline=10))
                await wait_until(lambda: fake.in_flight == 1, what="the LLM call")
                await game.send_raw(bad)
                turn = await turn_task
                assert turn.finished and turn.plays == [] and turn.latency < 5
                assert any("ending my turn" in line for line in turn.chat)
                await wait_until(lambda: fake.in_flight == 0, what="the LLM call to be cancelled")
            stall.set()
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and [p.shape for p in turn.plays] == ["Green"]
            assert_agent_frames_valid(game)


async def test_a_bad_frame_in_place_of_the_feedback_ends_the_turn():
    """The game's answer to our play is unreadable: finish at once, and the next turn still plays."""
    async with serve_agent(planner_config(), host="127.0.0.1", port=0) as server, \
            connect(server.url, max_size=None) as ws:
        request = frame_text(SimGame().play_request_frame())

        async def until(kind: str) -> list[dict]:
            seen = []
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
                seen.append(frame)
                if frame["type"] == kind:
                    return seen

        await ws.send(request)
        await until("play")
        await ws.send('{"type": "playFeedback", "state": {"on_board": 12}}')
        seen = await until("finish")
        assert any("answer to my move" in f.get("message", "") for f in seen)
        await ws.send(request)
        await until("play")


async def test_frame_over_the_limit_closes_that_connection_with_1009_only(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    config = planner_config(server={"max_frame_bytes": 512 * 1024})  # a real-look frame is about 230 KB
    async with serve_agent(config, host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, seed=1) as other, GameClient(server.url, seed=2) as hostile:
            assert (await other.ai_turn(deadline=10)).finished
            await hostile.send_raw("x" * (512 * 1024 + 1))
            await wait_until(lambda: not hostile.connected, what="the hostile connection to close")
            assert hostile._ws is not None and hostile._ws.close_code == 1009
            await wait_until(lambda: len(server.sessions) == 1, what="the hostile session to end")
            await other.human_turn()
            assert (await other.ai_turn(deadline=10)).finished
            async with GameClient(server.url) as newcomer:  # the server still takes new games
                assert (await newcomer.ai_turn(deadline=10)).finished
            assert_agent_frames_valid(other)
    lines = [r.getMessage() for r in caplog.records if "1009" in r.getMessage()]
    assert len(lines) == 1 and "524288" in lines[0]


def big_png(min_bytes: int) -> str:
    """A real PNG of random pixels (so it does not compress), as base64 of at least min_bytes."""
    side = int((min_bytes * 3 / 4 / 3) ** 0.5) + 8
    rng = random.Random(0)
    img = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    buf = io.BytesIO()
    img.save(buf, "PNG", compress_level=1)
    b64 = base64.b64encode(buf.getvalue()).decode("ascii")
    assert len(b64) >= min_bytes
    return b64


async def test_a_6_mb_frame_is_taken_with_the_default_limit(tmp_path):
    board = big_png(6 * 1024 * 1024)
    async with FakeOpenAI(responder=good_replies()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, deadline=20), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url) as game:
            drawer = game.game.images()[1]
            game.game.images = lambda *_: (board, drawer)  # type: ignore[method-assign]
            turn = await game.ai_turn(deadline=20)
            assert turn.finished and [p.shape for p in turn.plays] == ["Green"]
            assert max(s.size for s in game.sent) > 6 * 1024 * 1024
            assert_agent_frames_valid(game)
        url = fake.chat_requests[0].image_urls()[0]
        sent = Image.open(io.BytesIO(base64.b64decode(url.partition(",")[2])))
        assert max(sent.size) == 512  # decoded and shrunk for the LLM, not passed through
    frames_in = [json.loads(x) for x in server.transcript_paths()[0].read_text().splitlines()]
    first = next(r for r in frames_in if r["kind"] == "frame_in")
    assert first["bytes"] > 6 * 1024 * 1024 and first["board_img"]["b64_chars"] == len(board)


async def test_broken_images_and_unknown_pieces_still_give_a_normal_turn(tmp_path):
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 200).decode()
    async with FakeOpenAI(responder=good_replies()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url) as game:
            game.game.images = lambda *_: ("!!! not base64 !!!", png)  # type: ignore[method-assign]
            game.game.state = lambda real=game.game.state: {  # type: ignore[method-assign]
                **real(), "on_board": {**real()["on_board"], "Pink": {"position": {"position": "(5, 5)"}}}}
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and [p.shape for p in turn.plays] == ["Green"]
            assert_agent_frames_valid(game)
        assert fake.chat_requests[0].image_urls() == []
    kinds = [json.loads(x)["kind"] for x in server.transcript_paths()[0].read_text().splitlines()]
    assert kinds.count("image_error") >= 2


async def test_binary_frames_with_a_valid_request_are_served(tmp_path):
    async with serve_agent(planner_config(), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url) as game:
            request = game.game.start_ai_turn()
            await game.send_raw(frame_text(request).encode("utf-8"))
            finish = await game.next_frame(timeout=10, type="finish")
            assert finish is not None and game.game.turns[-1].ended_by == "finish"
            assert game.game.turns[-1].plays
            assert_agent_frames_valid(game)


NASTY = [
    "x" * 100_000,
    "\u0000\u0001\u0007\u001b[31m red \u001b[0m",
    "line one\nline two\r\nline three\u2028four",
    '"}, {"type": "play", "shape": "Pink", "position": [1e999, 0]}',
    "\ud800 lone surrogate \udfff",
    "\u202eevil rtl\u202c and emoji 🧩🔺" * 500,
    "ƒ" * 40_000,
]


@pytest.mark.parametrize("echo_in_reply", [False, True])
async def test_whatever_the_player_types_the_agent_frames_stay_valid(tmp_path, echo_in_reply):
    """The player types anything; the model may even repeat it back. The game still gets valid frames."""
    lines = itertools.cycle(NASTY)

    def responder(req):
        if echo_in_reply:
            return FakeReply.ok_json({"reply": next(lines), **MOVE, "chat": next(lines)})
        return good_replies()(req)

    # max_tokens high enough that the echoed lines (up to 340,000 characters) are replies a model
    # could send: replies far over max_tokens are refused unread (issue 10).
    config = llm_config("", tmp_path, llm={"max_tokens": 16384})
    async with FakeOpenAI(responder=responder) as fake, \
            serve_agent(config.model_copy(update={"llm": config.llm.model_copy(update={"base_url": fake.base_url})}),
                        host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, chat_timeout=10) as game:
            for text in NASTY[:3]:
                reply = await game.chat(text)
                assert reply.reply is not None
            turn = await game.ai_turn(deadline=10)
            assert turn.finished
            for text in NASTY[3:]:
                if "\ud800" in text:  # the game cannot type this, but a JSON escape can carry it
                    while await game.next_frame(timeout=0) is not None:
                        pass  # wait below for the reply to this line, not an older one
                    await game.send_raw(json.dumps({"type": "chatRequest", "message": text, "objective": "A house"}))
                    assert await game.next_frame(timeout=10, type="chat") is not None
                else:
                    assert (await game.chat(text)).reply is not None
            assert_agent_frames_valid(game)
            assert max(f.size for f in game.frames) < 16 * 1024
    records = [json.loads(line) for line in server.transcript_paths()[0].read_text(encoding="utf-8").splitlines()]
    assert records[-1]["kind"] == "session_end"  # lone surrogates did not stop the transcript
    llm = [r for r in records if r["kind"] == "llm"]
    assert len(llm) >= 8 and all(r["error"] is None for r in llm)  # nothing typed broke the LLM requests
