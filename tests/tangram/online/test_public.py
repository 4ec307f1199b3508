"""The online study's idle sweep (public.py's time_out_idle) and the page's warning: the server times
out (with the clock the test gives), the page only warns, in a real browser (headless Chromium through
Selenium; that test skips without one, as the other browser tests do)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.core.studies.idle import parse_stamp
from agent.core.studies.online import OnlineRun, Visit
from agent.core.studies.run import StudyRun
from agent.games import read_study as load
from agent.games.tangram.online.app import visit_json
from agent.games.tangram.online.public import TIMED_OUT, time_out_idle
from tests.questionnaire_study import QUESTIONNAIRES
from tests.tangram.console.support import browser_or_skip_reason, module_browser, skip_without_browser
from tests.tangram.online.support import STUDY, served_study
from tests.tangram.online.test_browser import OnlineRig, wait

REASON = browser_or_skip_reason()
if REASON is None:
    from selenium.webdriver.common.by import By

LIMITS = "  page_timeout_s: 60\n  game_timeout_s: 900\n  timeout_warning_s: 59.5\n  on_leave: drop\n"
IDLE_STUDY = ("\n".join(line for line in STUDY.splitlines() if "completion_url" not in line) + "\n" + LIMITS
              + QUESTIONNAIRES)


@dataclasses.dataclass
class FakeSocket:
    closed: bool = False
    code: int | None = None

    async def close(self, code: int, message: bytes) -> None:
        self.closed, self.code = True, code


@dataclasses.dataclass
class FakeSockets:
    live: dict[str, tuple[FakeSocket, str]]


async def test_the_sweep_times_out_the_idle_and_closes_a_dropped_participants_game(tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(IDLE_STUDY.replace("RECRUITMENT", "invite").replace("planner.yaml", "offline.yaml"))
    async with await StudyRun.open(load(path)) as run:
        online = OnlineRun(run)
        first, second = await online.invite(2)
        one = await online.answer_consent(first.code, True)
        two = await online.answer_consent(second.code, True)
        assert one is not None and two is not None and one.participant and two.participant
        row = await run.store.participant(one.participant)
        assert row is not None and row.active_at is not None
        socket, other = FakeSocket(), FakeSocket()
        sockets: Any = FakeSockets({one.participant: (socket, ""), two.participant: (other, "")})
        assert await time_out_idle(online, sockets, parse_stamp(row.active_at) + timedelta(seconds=30)) == []
        assert not socket.closed
        await run.store.set_state(two.participant, "paused")  # a paused participant is not timed out
        assert await time_out_idle(online, sockets, parse_stamp(row.active_at) + timedelta(seconds=61)) == \
            [one.participant]
        assert not other.closed
        assert socket.closed and socket.code == TIMED_OUT


async def test_the_page_is_told_its_limit_online_and_none_in_the_lab(tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(IDLE_STUDY.replace("RECRUITMENT", "invite").replace("planner.yaml", "offline.yaml"))
    async with await StudyRun.open(load(path)) as run:
        online = OnlineRun(run)
        page = Visit("L0001", "questionnaire", 0, 2, language="en", page={})
        play = dataclasses.replace(page, stage="play", page=None)
        done = dataclasses.replace(page, stage="done", page=None)
        assert visit_json(page, online)["idle"] == {"limit_s": 60, "warn_s": 59.5}
        assert visit_json(play, online)["idle"] == {"limit_s": 900, "warn_s": 59.5}
        assert "idle" not in visit_json(done, online)
        lab = visit_json(page, online, lab=True)
        assert "idle" not in lab and lab["lab"] is True


class IdleRig(OnlineRig):
    async def _start(self) -> None:
        self.served = await self._stack.enter_async_context(served_study(self.dir, study_text=IDLE_STUDY))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from module_browser("idle browser test", REASON, width=1200, height=800)


@skip_without_browser("idle browser test", REASON)
def test_the_page_warns_before_the_limit_and_the_server_times_out(browser: Any) -> None:
    with IdleRig() as rig:
        store = rig.served.run.store
        invite = rig.invite()
        browser.get(f"{rig.served.url}/p/{invite.code}")
        wait(browser, lambda: (browser.find_elements(By.CSS_SELECTOR, "#buttons button.primary") or [None])[0]).click()
        wait(browser, lambda: browser.find_element(By.ID, "title").text == "About you")
        # Half a second before the 60 s limit (the warning's 59.5 s), the page warns.
        warning = wait(browser, lambda: (browser.find_elements(By.ID, "idle-warning") or [None])[0])
        assert "Are you still there?" in warning.text and "60 seconds" in warning.text
        assert warning.get_attribute("role") == "alertdialog"
        before = rig.run(store.participant("L0001"))
        assert before is not None and before.active_at is not None
        browser.find_element(By.ID, "still-here").click()  # a sign of life the server counts
        wait(browser, lambda: (after := rig.run(store.participant("L0001"))) is not None
             and after.active_at is not None and after.active_at > before.active_at)
        assert browser.find_element(By.ID, "title").text == "About you"
        # The server's judgement, with its own clock: 61 s without a sign of life.
        row = rig.run(store.participant("L0001"))
        assert row is not None and row.active_at is not None
        assert rig.run(time_out_idle(rig.served.online, rig.served.sockets,
                                     parse_stamp(row.active_at) + timedelta(seconds=61))) == ["L0001"]
        still = wait(browser, lambda: (browser.find_elements(By.ID, "still-here") or [None])[0])
        still.click()  # too late: the page learns it was timed out
        wait(browser, lambda: browser.find_element(By.ID, "title").text == "Your time ran out")
        assert rig.run(store.answers("L0001")) == []
