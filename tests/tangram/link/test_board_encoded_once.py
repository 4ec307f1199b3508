"""A board picture the LLM player marks is encoded once: the session leaves the downscaled pixels
undecoded-and-unencoded for the marks, and what the model gets is exactly what encoding the
session's PNG and marking it would give."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

from agent.core.images import encode_image, prepare_image
from agent.core.testing.fake_openai import FakeOpenAI, first_enum_responder
from agent.games.tangram.config import Config
from agent.games.tangram.contract import board_of
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.pictures.annotate import Encoding, annotate_board
from agent.games.tangram.pictures.repaint import redrawn_image
from agent.games.tangram.protocol import parse_frame
from agent.games.tangram.sim import GameClient
from agent.games.tangram.sim.simgame import SimGame

LAYERS = ["grid", "labels"]


def config(base_url: str, tmp_path: Any) -> Config:
    return Config.model_validate({
        "player": "llm", "turn": {"deadline": 10},
        "llm": {"base_url": base_url, "api_key_required": False, "request_timeout": 5, "retry": {"max_attempts": 1}},
        "images": {"annotate": LAYERS}, "transcripts": {"enabled": False}})


def test_pixels_left_unencoded_encode_to_the_same_picture() -> None:
    game = SimGame("A house")
    game.place("Red", 50, 60, 180)
    frame = game.play_request_frame()
    cfg = Config().images
    whole = prepare_image(frame["board_img"], cfg)
    left = prepare_image(frame["board_img"], cfg, encode=False)
    assert left.data == b"" and left.pixels is not None and (left.width, left.height) == (whole.width, whole.height)
    assert encode_image(left.pixels, cfg) == whole.data
    # A picture that goes out as it came (small enough, PNG) comes back encoded either way.
    small = prepare_image(frame["drawer_img"], cfg, encode=False)
    assert small.pixels is None and small.data == base64.b64decode(frame["drawer_img"])


async def test_the_model_gets_the_marked_board_encoded_once_as_it_would_be_twice(tmp_path: Any) -> None:
    async with FakeOpenAI(responder=first_enum_responder) as fake, \
            serve_agent(config(fake.base_url, tmp_path), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A house", human="random", seed=4) as game:
            sent_frames = []
            for _ in range(2):
                await game.human_turn()
                sent_frames.append(game.game.play_request_frame())
                assert (await game.ai_turn(deadline=15)).finished
    for frame, request in zip(sent_frames, fake.chat_requests, strict=False):
        state = parse_frame(json.dumps(frame)).state
        # The default source draws the board from the state (images.source: redrawn), then the marks go on.
        prepared = redrawn_image(frame["board_img"], state, "board", Config().images)
        expected = annotate_board(prepared.data, board_of(state), LAYERS, (), Encoding())
        board_url = request.image_urls()[0]
        assert base64.b64decode(board_url.partition(",")[2]) == expected


class Marker:
    """A player that marks the board (it gets the pixels, to draw on)."""

    uses_images = True
    marks_board = True


@pytest.mark.parametrize("source", ["redrawn", "restored"])
async def test_a_chat_during_the_turn_shares_the_turns_picture_preparation(monkeypatch: Any, source: str) -> None:
    from agent.core.memory import Memory
    from agent.games.tangram.link import views as views_module
    from agent.games.tangram.pictures import repaint

    calls: list[str] = []

    def counting(job: Any) -> Any:
        def counted(b64: str, *args: Any) -> Any:
            calls.append(b64)
            return job(b64, *args)
        return counted

    monkeypatch.setattr(repaint, "prepare_image", counting(prepare_image))
    monkeypatch.setattr(repaint, "redrawn_image", counting(redrawn_image))
    game = SimGame("A house")
    game.place("Red", 50, 60, 180)
    turn = parse_frame(json.dumps(game.play_request_frame()))
    chat = parse_frame(json.dumps({**game.play_request_frame(), "type": "chatRequest", "message": "hi"}))
    config = Config.model_validate({"images": {"source": source}})
    views = views_module.Views(config, Marker(), Memory(), "test")  # type: ignore[arg-type]
    seen = await asyncio.gather(views.view(turn), views.view(chat, drawer=False))
    assert calls.count(str(turn.board_img)) == 1 and len(calls) == 2  # the board once, the drawer once
    boards = [view.board_pixels for view in seen]
    assert boards[0] is not boards[1] and boards[0].tobytes() == boards[1].tobytes(), "each its own pixels to draw on"
    game.place("Blue", 20, 20, 0)  # a new board: prepared anew
    await views.view(parse_frame(json.dumps(game.play_request_frame())))
    assert len(calls) == 4
