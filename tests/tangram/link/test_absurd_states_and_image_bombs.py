"""Absurd states, list floods and image bombs, over real sockets (issue 10, findings 4, 5 and 6)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
import threading
import time

import psutil
from PIL import Image
from websockets.asyncio.client import connect

from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient
from tests.tangram.link.socket_support import feedback, frames_until, play_one_turn, play_request, records
from tests.tangram.support import good_replies, llm_config, planner_config

ABSURD = {"position": "(1e308, -1e308)", "rotation": 0, "vertices": ["(1e308, 1e308)", "(-1e308, 1e308)", "(0, 0)"],
          "collisions": []}
"""Finite, so it passed parsing; then shapely met inf and NaN and the turn ended as internal-error."""
COLLISION_NAMES = 1_500_000


async def test_absurd_but_finite_coordinates_cost_an_entry_not_the_turn(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    with FakeOpenAI(responder=good_replies()) as fake:
        async with serve_agent(llm_config(fake.base_url, tmp_path, deadline=8), host="127.0.0.1", port=0) as server:
            async with connect(server.url) as ws:
                frames = await play_one_turn(ws, play_request({"Red": ABSURD}))
    kinds = [f["type"] for f in frames]
    assert "play" in kinds and kinds[-1] == "finish", kinds
    ends = records(server.transcript_paths(), "turn_end")
    assert [e["outcome"] for e in ends] == ["played"], ends  # before: internal-error
    assert any("on_board.Red: coordinates out of range" in r.getMessage() for r in caplog.records)


async def test_a_flood_of_collision_names_bounds_logs_and_transcript(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    async with serve_agent(planner_config(tmp_path), host="127.0.0.1", port=0) as server:
        async with connect(server.url, max_size=None) as ws:
            await ws.send(json.dumps(play_request()))
            play = (await frames_until(ws, "play"))[-1]
            x, y = play["position"]
            flood = feedback(play["shape"], x, y, play["rotation"], collisions=["Red"] * COLLISION_NAMES)
            await ws.send(json.dumps(flood))
            seen = []
            async with asyncio.timeout(15):
                while not seen or seen[-1]["type"] != "finish":
                    seen.append(json.loads(await ws.recv()))
                    if seen[-1]["type"] == "play":  # a corrected play: it stands this time
                        p = seen[-1]
                        await ws.send(json.dumps(feedback(p["shape"], *p["position"], p["rotation"])))
    lines = [r.getMessage() for r in caplog.records]
    # Before: four log lines of 13.5 MB and an 85 MB transcript for one such frame.
    assert max(map(len, lines)) < 2_000, max(map(len, lines))
    assert sum(map(len, lines)) < 50_000
    assert sum(p.stat().st_size for p in server.transcript_paths()) < 200_000
    assert any("1,500,000 names" in line for line in lines)


def png_b64(side: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (side, side), (200, 30, 30)).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


class PeakRSS:
    def __init__(self) -> None:
        self.process = psutil.Process()
        self.start = self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.02)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def test_image_bombs_neither_starve_other_games_nor_eat_memory(tmp_path):
    """Three connections send 36-megapixel PNGs (160 kB of base64, 144 MB decoded) turn after turn;
    before: a bystander's turns took up to 12 s and the process reached 1.7 GB."""
    bomb = png_b64(6000)
    with FakeOpenAI(responder=good_replies()) as fake:
        async with serve_agent(llm_config(fake.base_url, tmp_path, deadline=10), host="127.0.0.1", port=0) as server:
            done = asyncio.Event()

            async def attacker() -> None:
                async with connect(server.url, max_size=None) as ws:
                    while not done.is_set():
                        await play_one_turn(ws, {**play_request(), "board_img": bomb, "drawer_img": bomb}, timeout=30)

            with PeakRSS() as rss:
                attackers = [asyncio.create_task(attacker()) for _ in range(3)]
                await asyncio.sleep(0.5)
                async with GameClient(server.url, seed=5) as game:
                    turns = [await game.ai_turn(deadline=15) for _ in range(3)]
                done.set()
                await asyncio.gather(*attackers)
            decoders = {t.name.split("_")[0] for t in threading.enumerate() if t.name.startswith("image-decode")}
    assert all(t.finished and t.plays for t in turns), [t.ended_by for t in turns]
    assert max(t.latency for t in turns) < 3.0, [t.latency for t in turns]
    assert rss.peak - rss.start < 300 * 2**20, (rss.peak - rss.start) >> 20
    assert decoders == {"image-decode"}  # the server's own pool, not the shared default one
    errors = records(server.transcript_paths(), "image_error")
    assert errors and all("over 2,500,000 pixels" in e["reason"] for e in errors), errors[:2]
