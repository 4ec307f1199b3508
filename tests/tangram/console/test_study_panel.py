"""The console's study panel over its WebSocket (console/study_panel.py): the snapshot carries the study,
next/pause/resume/drop change the study's database and every page hears of it, a refused change
says why, a game's card names its participant and condition, and a Wizard-of-Oz condition's game
opens in wizard mode."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from tests.tangram.console.study_rig import StudyRig


@pytest.fixture
def rig() -> Iterator[StudyRig]:
    with StudyRig({"wizard": {"console": "wizard"}, "planner": {}}) as rig:
        yield rig


class Page:
    def __init__(self, rig: StudyRig) -> None:
        self.rig = rig
        self.session: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.unread: list[dict[str, Any]] = []

    async def open(self) -> dict[str, Any]:
        self.session = aiohttp.ClientSession()
        self.ws = await self.session.ws_connect(self.rig.url + "ws")
        return await self.receive("snapshot")

    async def receive(self, kind: str, match: Any = None) -> dict[str, Any]:
        """The first message of ``kind`` (that ``match``es) not taken yet, in arrival order."""
        assert self.ws is not None

        def fits(message: dict[str, Any]) -> bool:
            return message["type"] == kind and (match is None or match(message))

        async with asyncio.timeout(10):
            while True:
                found = next((m for m in self.unread if fits(m)), None)
                if found is not None:
                    self.unread.remove(found)
                    return found
                self.unread.append(json.loads((await self.ws.receive()).data))

    async def send(self, **message: Any) -> None:
        assert self.ws is not None
        await self.ws.send_str(json.dumps(message))

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.session is not None:
            await self.session.close()


def participant(study: dict[str, Any], pid: str) -> dict[str, Any]:
    return next(p for p in study["participants"] if p["id"] == pid)


def test_the_study_panel_shows_participants_and_takes_the_controls(rig: StudyRig) -> None:
    async def scenario() -> None:
        page = Page(rig)
        try:
            snapshot = await page.open()
            study = snapshot["study"]
            assert study["study"] == "console-study" and study["participants"] == []
            assert study["conditions"] == ["wizard", "planner"]

            await page.send(type="study", action="next", participant="P01", who="Ana")
            note = await page.receive("notice")
            assert note["text"].startswith("P01 is active: wizard, planner")
            update = await page.receive("study", lambda m: m["study"]["participants"])
            p01 = participant(update["study"], "P01")
            assert (p01["state"], p01["order"], p01["next_condition"]) == ("active", ["wizard", "planner"], "wizard")

            # A second active participant is refused with the study's own reason.
            await page.send(type="study", action="next", participant="P02")
            assert "refused" in (await page.receive("notice"))["text"]
            await page.send(type="study", action="next", participant="bad id!")
            assert "refused" in (await page.receive("notice"))["text"]

            await page.send(type="study", action="pause", participant="P01")
            assert (await page.receive("notice"))["text"].startswith("P01 is paused")
            await page.send(type="study", action="resume", participant="P01")
            assert (await page.receive("notice"))["text"].startswith("P01 is active")
            await page.send(type="study", action="drop", participant="P01")
            assert (await page.receive("notice"))["text"].startswith("P01 is dropped")
            update = await page.receive("study", lambda m: participant(m["study"], "P01")["state"] == "dropped")
            assert update["study"]["counts"]["dropped"] == 1
            # The dropped participant's sequence goes to the next one started.
            await page.send(type="study", action="next", participant="P02")
            update = await page.receive("study", lambda m: len(m["study"]["participants"]) == 2)
            p02 = participant(update["study"], "P02")
            assert p02["replaces"] == "P01" and p02["order"] == ["wizard", "planner"]
        finally:
            await page.close()

    rig.run(scenario())


def test_a_wizard_conditions_game_opens_in_wizard_mode_and_names_its_participant(rig: StudyRig) -> None:
    async def scenario() -> None:
        await rig.run_.next_participant("P01")
        page = Page(rig)
        try:
            await page.open()
            game = rig.games[-1]
            await game.human_turn()
            turn = asyncio.create_task(game.ai_turn(deadline=40))
            shown = await page.receive("game", lambda m: m["game"]["study"] is not None and m["game"]["reviews"])
            card = shown["game"]
            assert card["mode"] == "wizard"
            assert card["study"] == {"study": "console-study", "attempt": 1, "participant": "P01",
                                     "condition": "wizard", "order": "1"}
            review = card["reviews"][0]
            await page.send(type="verdict", game=card["id"], review=review["id"], action="approve")
            assert (await turn).finished
        finally:
            await page.close()

    rig.game()
    rig.run(scenario(), timeout=60)
