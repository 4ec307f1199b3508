"""The token option and the real game (GAME_FACTS: the game dials ws://localhost:5000, no query string)."""

from __future__ import annotations

import logging

import pytest
from websockets.exceptions import InvalidStatus

from agent.games.tangram.link import server as server_module
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient
from tests.tangram.support import planner_config

TOKEN = "tok-for-other-clients-only"


async def _rejected(url: str) -> None:
    with pytest.raises(InvalidStatus):
        async with GameClient(url):
            pass


async def test_a_token_gets_a_start_up_note_that_the_game_cannot_connect(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    async with serve_agent(planner_config(server={"token": TOKEN}), host="127.0.0.1", port=0):
        pass
    notes = [r.getMessage() for r in caplog.records if "Godot game cannot connect" in r.getMessage()]
    assert len(notes) == 1 and TOKEN not in notes[0]


async def test_no_note_without_a_token(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    async with serve_agent(planner_config(), host="127.0.0.1", port=0):
        pass
    assert not [r for r in caplog.records if "token" in r.getMessage()]


async def test_rejections_are_logged_once_then_summed_up(caplog: pytest.LogCaptureFixture,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.WARNING)
    async with serve_agent(planner_config(server={"token": TOKEN}), host="127.0.0.1", port=0) as server:
        for _ in range(5):  # the game re-dialling
            await _rejected(server.url)
        lines = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
        assert len(lines) == 1 and "keeps re-dialling" in lines[0]
        monkeypatch.setattr(server_module, "REJECTION_LOG_EVERY_S", 0.0)
        await _rejected(server.url)
        lines = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
        assert len(lines) == 2 and "rejected 5 more clients" in lines[1]
